"""Can an annotator tell a gold item from ordinary work by anything they observe?

    DJANGO_DEBUG=1 .venv/bin/python -m bench.gold_tell [--handouts 300] [--rate 0.33]
        [--sqlite]

Sets up a project of GSM8K's example model solutions (about 5,000, four per problem) with
``--gold`` of them, picked at random, made gold items, and one annotator with an API token and a
browser session. Other people's hidden activity is seeded as it would build up: each gold item
(which bypasses overlap) carries three other annotators' own steps at its first step, a third of
the ordinary solutions one. The annotator then loops ``--handouts`` times in this process, one
request at a time, through Django and DRF as served (DEBUG off): ``POST
/api/projects/{id}/next/``, a draft that rates the first step -1, writes an own step there and
withdraws both (the number the own step gets), then ``POST /api/assignments/{id}/submit/`` with
ratings, and the every-minute gold job. Around each hand-out it records what an annotator can
observe: each request's wall time, the home page's project card before, during and after, the
status code and the shape of every answer (the payload's keys, the own step's number, the
submit's answer, the standing, the checked results), how its own counts moved, and whether the
card changed across ``next`` and across the submit, and the checked results across the gold job. Afterwards
the database says which hand-outs were gold. A gold pass's scoring job is published to the real
broker (Redis, as in production; ``--sqlite`` uses the demo's filesystem broker).

Prints:

- latency, for ``next`` and ``submit``: the median and p90 of gold and of ordinary requests, and
  the accuracy of the best single-threshold classifier on latency, against always guessing
  "ordinary". In-process timing has no network jitter to hide a difference behind: a client
  over a network sees less than this.
- every other observable: how many distinct values it took, and the accuracy of the best
  classifier on it (each value predicts the kind the other hand-outs with that value came with
  most often, left one out), against always guessing "ordinary".
- the empty queue: in a small project of its own, the annotator takes ordinary work until
  ``next`` answers 204, then asks again with gold due; how many hand-outs came after the first
  204, and how many of them were gold.

Goal (issues #18 and #26): medians within 1 ms of each other, and no classifier on any
observable better than always guessing "ordinary" plus 5 points; no hand-out after a 204. What
it measured: docs/performance.md.
"""
import argparse
import json
import os
import random
import re
import statistics
import tempfile
import time
import uuid

from bench._database import bench_database_url, create_database, migrate, use_database
from labeling.data import data_path

PROJECT = "bench gold tell"
GOAL = ("goal: gold and ordinary medians within 1 ms; every classifier <= always-ordinary + 5 points; "
        "nothing handed out after a 204")
# What differs from one hand-out to the next whatever its kind (ids, times, texts, a list's size
# and links as passes pile up): recorded by type only.
VARYING = {"id", "assignment", "handed_out_at", "lease_expires_at", "submitted_at", "total_time", "through",
           "count", "next", "previous", "text", "problem", "ground_truth_answer", "revision"}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.gold_tell", description=__doc__.split("\n\n")[0])
    parser.add_argument("--handouts", type=int, default=300, help="hand-outs measured (default 300)")
    parser.add_argument("--warmup", type=int, default=20, help="loops before measuring (default 20)")
    parser.add_argument("--rate", type=float, default=0.33, help="the project's gold rate, quality_control_rate (default 0.33)")
    parser.add_argument("--gold", type=int, default=200, help="gold items in the project (default 200)")
    parser.add_argument("--sqlite", action="store_true", help="the embedded default (SQLite, filesystem broker)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)

    workdir = tempfile.mkdtemp(prefix="stepmark-goldtell-")
    if args.sqlite:
        url = f"sqlite:///{workdir}/goldtell.sqlite3"
        os.environ["STEPMARK_BROKER"] = "filesystem"
        os.environ.setdefault("STEPMARK_VAR_DIR", workdir)
    else:
        url = bench_database_url("postgres://postgres@127.0.0.1:5432/stepmark_goldtell", "goldtell",
                                 "without --sqlite this benchmark needs PostgreSQL: set DATABASE_URL or leave it unset")
        create_database(url)
        # Its own Redis database: the gold jobs published here are dropped at the end.
        os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/14")
    use_database(url)
    migrate()
    project_id, token = _prepare(args.gold, args.rate, args.seed)
    print(f"database: {url.rsplit('@', 1)[-1]}; {args.handouts} hand-outs at rate {args.rate}; "
          f"load average {os.getloadavg()[0]:.1f}")
    print(GOAL)
    failed = False
    _reset(project_id)
    samples, seen = _drive(project_id, token, args.handouts, args.warmup, rng=random.Random(args.seed))
    failed |= _report("sqlite" if args.sqlite else "postgresql", samples)
    failed |= _report_observables(seen)
    failed |= _report_empty_queue()
    _drop_jobs()
    return 1 if failed else 0


def _prepare(gold_count, rate, seed):
    """The project (imported once, ``gold_count`` random solutions made gold) and the annotator's token."""
    from django.contrib.auth import get_user_model
    from django.db import connection

    from labeling.access.roles import ANNOTATOR, grant_role
    from labeling.access.tokens import issue
    from labeling.imports import run_import
    from labeling.models import Project, Solution
    from labeling.quality import gold

    project, created = Project.objects.get_or_create(name=PROJECT, defaults={"overlap": 3})
    if created or not project.solutions.exists():
        run_import("gsm8k-examples", data_path("gsm8k/example_model_solutions.jsonl.gz"), project)
    Project.objects.filter(pk=project.pk).update(quality_control_rate=rate, gold_threshold=0.0,
                                                 allow_human_steps=True)
    if Solution.objects.filter(project=project, is_gold=True).count() != gold_count:
        Solution.objects.filter(project=project, is_gold=True).update(is_gold=False)
        ids = sorted(Solution.objects.filter(project=project).values_list("pk", flat=True))
        for pk in random.Random(seed).sample(ids, gold_count):
            solution = Solution.objects.get(pk=pk)
            gold.set_gold(solution, {(s.position, 0): 1 for s in solution.steps.filter(alternative=0)})
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    user, _ = get_user_model().objects.get_or_create(username="goldtell-annotator")
    grant_role(user, ANNOTATOR, project)
    key, _ = issue(user, "bench.gold_tell")  # a new one each run: only its hash is stored
    return project.pk, key


def _reset(project_id):
    """No passes; then other people's hidden own steps, as they build up (``_seed_hidden_steps``)."""
    from labeling.models import Assignment, GoldScore, Project, Step
    from labeling.work import queue

    GoldScore.objects.filter(project_id=project_id).delete()
    Step.objects.filter(solution__project_id=project_id, source=Step.HUMAN).delete()
    Assignment.objects.filter(project_id=project_id).delete()
    _seed_hidden_steps(project_id)
    queue.recount_live_assignments(Project.objects.get(pk=project_id))


def _seed_hidden_steps(project_id, seed=7):
    """Three other annotators' own steps at the first step of each gold item, one at a third of the
    ordinary solutions: gold bypasses overlap and collects more of them (issue #26's numbering)."""
    from django.utils import timezone

    from labeling.models import Annotator, Assignment, Solution, Step

    others = [Annotator.objects.get_or_create(user=_user(f"goldtell-other-{n}"))[0] for n in range(3)]
    rng, now = random.Random(seed), timezone.now()
    passes = []
    for pk, is_gold in Solution.objects.filter(project_id=project_id).values_list("pk", "is_gold"):
        people = 3 if is_gold else (1 if rng.random() < 1 / 3 else 0)
        passes += [Assignment(project_id=project_id, solution_id=pk, annotator=others[n], state=Assignment.SUBMITTED,
                              submitted_at=now, finish_reason="give_up", finish_note="seeded") for n in range(people)]
    Assignment.objects.bulk_create(passes, batch_size=2000)
    taken = {}
    steps = []
    for a in passes:
        taken[a.solution_id] = taken.get(a.solution_id, 0) + 1
        steps.append(Step(solution_id=a.solution_id, position=0, alternative=99 + taken[a.solution_id],
                          text="Their own step.", source=Step.HUMAN, author=a))
    Step.objects.bulk_create(steps, batch_size=2000)


def _user(name):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.get_or_create(username=name)[0]


def _drive(project_id, token, handouts, warmup, rng):
    """``([(endpoint, seconds, is_gold)], {observable: [(value, is_gold)]})`` for the measured loops,
    one request at a time."""
    from django.conf import settings
    from django.test import Client

    from bench.annotator_loop import plan_ratings
    from labeling.models import Assignment

    settings.DEBUG = False
    client = Client(HTTP_AUTHORIZATION=f"Token {token}")
    browser = Client()  # the same person's session, for the home page
    browser.force_login(_user("goldtell-annotator"))
    timed, observed = [], []
    for i in range(warmup + handouts):
        seen = {"card before": _card(browser, project_id)}
        counts = _counts(client)
        started = time.perf_counter()
        response = client.post(f"/api/projects/{project_id}/next/", content_type="application/json")
        next_seconds = time.perf_counter() - started
        assert response.status_code in (200, 201), response.content[:300]
        assignment = response.json()
        seen["next"] = _answer(response)
        seen["card during"] = _card(browser, project_id)
        seen["standing during"] = _answer(client.get(f"/api/projects/{project_id}/my-status/"))
        seen["checks during"] = _answer(client.get(f"/api/projects/{project_id}/my-missed/"))
        seen.update(_own_step_probe(client, assignment))
        reason, ratings = plan_ratings(assignment, rng)
        body = {"finish_reason": reason, "note": "", "submit_key": uuid.uuid4().hex, "ratings": ratings}
        started = time.perf_counter()
        response = client.post(f"/api/assignments/{assignment['id']}/submit/", body, content_type="application/json")
        submit_seconds = time.perf_counter() - started
        assert response.status_code == 200, response.content[:300]
        seen["submit"] = _answer(response, drop_ratings=True)  # the ratings are the plan's, drawn
        _score_gold()
        seen["card after"] = _card(browser, project_id)
        seen["checks after"] = _answer(client.get(f"/api/projects/{project_id}/my-missed/"))
        after = _counts(client)
        seen["counts moved"] = {k: after.get(k, 0) - counts.get(k, 0) for k in ("submitted_today", "submitted_total",
                                                                               "in_progress")}
        # What a person compares: did the card or the checked results change across next, across the submit?
        seen["card moved at next"] = seen["card during"] != seen["card before"]
        seen["card moved at submit"] = seen["card after"] != seen["card during"]
        seen["checks moved"] = seen["checks after"] != seen["checks during"]
        if i >= warmup:
            timed.append((assignment["id"], next_seconds, submit_seconds))
            observed.append((assignment["id"], seen))
    gold = dict(Assignment.objects.filter(pk__in=[t[0] for t in timed]).values_list("pk", "is_quality_control"))
    samples = [("next", s, gold[pk]) for pk, s, _ in timed] + [("submit", s, gold[pk]) for pk, _, s in timed]
    by_observable = {}
    for pk, seen in observed:
        for name, value in seen.items():
            by_observable.setdefault(name, []).append((json.dumps(value, sort_keys=True), gold[pk]))
    return samples, by_observable


def _own_step_probe(client, assignment):
    """Rate the first step -1 (and its alternatives), write an own step there, withdraw both: what
    the draft answers (the own step's number among them)."""
    first = assignment["steps"][0]
    url = f"/api/assignments/{assignment['id']}/draft/"
    wrong = [{"position": first["position"], "alternative": a["alternative"], "value": -1}
             for a in first["alternatives"]]
    own = {"position": first["position"], "text": "My own step.", "value": 1}
    written = client.patch(url, {"ratings": [*wrong, own]}, content_type="application/json")
    withdrawn = client.patch(url, {"ratings": [{"position": first["position"], "text": None, "value": None}]},
                             content_type="application/json")
    cleared = client.patch(url, {"ratings": [{**r, "value": None} for r in wrong]}, content_type="application/json")
    return {"own step": _answer(written), "own step withdrawn": _answer(withdrawn), "ratings cleared": _answer(cleared)}


def _answer(response, drop_ratings=False):
    """What an annotator sees of an answer: status, header names, the body with ``VARYING`` values as types."""
    body = response.json() if response.content else None
    if drop_ratings and isinstance(body, dict):
        body = {k: v for k, v in body.items() if k != "ratings"}
    return {"status": response.status_code, "headers": sorted(k for k in response.headers if k not in
                                                               ("Content-Length", "Date")), "body": _shape(body)}


def _shape(data):
    if isinstance(data, dict):
        return {k: type(v).__name__ if k in VARYING else _shape(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_shape(v) for v in data]
    return data


def _card(browser, project_id):
    """The project's card on the home page, its count of the annotator's own passes left out (it moves
    by one on every submit, whatever the kind)."""
    html = browser.get("/").content.decode()
    found = re.search(rf'<section class="card project" data-project-id="{project_id}">(.*?)</section>', html, re.S)
    return re.sub(r"<b>[\d,]+</b> passes by you", "", found.group(1) if found else "")


def _counts(client):
    rows = client.get("/api/me/counts/").json()
    return rows[0] if rows else {}


def _score_gold():
    from datetime import timedelta

    from django.utils import timezone

    from labeling.quality.gold_passes import UNDO_MARGIN, score_pending_gold_passes
    from labeling.work.submission import UNDO_SECONDS

    # As the job runs once the passes' undo window is past (it leaves them alone inside it).
    score_pending_gold_passes(now=timezone.now() + timedelta(seconds=UNDO_SECONDS + UNDO_MARGIN + 1))


def lookup_accuracy(pairs):
    """The accuracy of the best classifier on a categorical observable over ``[(value, is_gold)]``, left
    one out: each hand-out's kind is predicted as the kind the *other* hand-outs with its value came
    with most often ("ordinary" on a tie or an unseen value), so content that merely varies (a
    solution's length) does not pass for a tell."""
    tally = {}
    for value, is_gold in pairs:
        tally.setdefault(value, [0, 0])[is_gold] += 1
    right = 0
    for value, is_gold in pairs:
        ordinary, gold = tally[value]
        ordinary, gold = ordinary - (not is_gold), gold - is_gold
        right += (gold > ordinary) == is_gold
    return right / len(pairs)


def best_threshold_accuracy(samples):
    """The accuracy of the best rule "gold when latency > t" (or "< t") over ``[(seconds, is_gold)]``."""
    ordered = sorted(samples)
    n, golds = len(ordered), sum(g for _, g in ordered)
    best = max(golds, n - golds)  # a threshold past either end: all one class
    below_gold = 0
    for i, (_, is_gold) in enumerate(ordered, start=1):
        below_gold += is_gold
        above_gold = golds - below_gold
        # "gold above": ordinary below are right, gold above are right; and the mirror rule.
        gold_above = (i - below_gold) + above_gold
        best = max(best, gold_above, n - gold_above)
    return best / n


def _report(path, samples):
    print(f"\n{path}:")
    print(f"  {'endpoint':<8} {'gold':>5} {'ordinary':>8}  {'gold p50/p90 ms':>16}  {'ordinary p50/p90 ms':>20}"
          f"  {'Δ p50 ms':>8}  {'classifier':>10}  {'always ordinary':>15}")
    failed = False
    for endpoint in ("next", "submit"):
        rows = [(s, g) for e, s, g in samples if e == endpoint]
        gold = [s * 1000 for s, g in rows if g]
        ordinary = [s * 1000 for s, g in rows if not g]
        if len(gold) < 2 or len(ordinary) < 2:
            print(f"  {endpoint:<8} too few of one kind ({len(gold)} gold, {len(ordinary)} ordinary)")
            failed = True
            continue
        delta = statistics.median(gold) - statistics.median(ordinary)
        accuracy = best_threshold_accuracy(rows)
        baseline = len(ordinary) / len(rows)
        ok = abs(delta) <= 1.0 and accuracy <= baseline + 0.05
        failed |= not ok
        print(f"  {endpoint:<8} {len(gold):>5} {len(ordinary):>8}  {_p(gold, 50):>7.1f} /{_p(gold, 90):>6.1f}  "
              f"{_p(ordinary, 50):>11.1f} /{_p(ordinary, 90):>6.1f}  {delta:>+8.2f}  {accuracy:>9.1%}  "
              f"{baseline:>14.1%}  {'ok' if ok else 'TELLS'}")
    return failed


def _report_observables(observed):
    print(f"  {'observable':<20} {'values':>6}  {'classifier':>10}  {'always ordinary':>15}")
    failed = False
    for name, pairs in observed.items():
        accuracy = lookup_accuracy(pairs)
        baseline = sum(not g for _, g in pairs) / len(pairs)
        ok = accuracy <= baseline + 0.05
        failed |= not ok
        print(f"  {name:<20} {len({v for v, _ in pairs}):>6}  {accuracy:>9.1%}  {baseline:>14.1%}  "
              f"{'ok' if ok else 'TELLS'}")
    return failed


def _report_empty_queue(ordinary=12, gold_items=6, asks=12):
    """A small project of its own: take its ordinary work until the first 204, then ask ``asks`` times
    more at rate 1 (gold due at every draw, unseen gold left)."""
    from django.test import Client

    from labeling.access.roles import ANNOTATOR, grant_role
    from labeling.models import Assignment, Problem, Project, Solution, Step
    from labeling.quality import gold

    project = Project.objects.create(name=f"{PROJECT} empty queue {uuid.uuid4().hex[:8]}", overlap=1,
                                     quality_control_rate=0.0)
    for n in range(ordinary + gold_items):
        problem = Problem.objects.create(project=project, problem=f"Problem {n}.", content_hash=uuid.uuid4().hex)
        solution = Solution.objects.create(project=project, problem=problem, num_steps=2, content_hash=uuid.uuid4().hex)
        Step.objects.bulk_create([Step(solution=solution, position=p, alternative=0, text=f"Step {p}.") for p in (0, 1)])
        if n >= ordinary:
            gold.set_gold(solution, {(0, 0): 1, (1, 0): 1})
    user = _user(f"goldtell-empty-{uuid.uuid4().hex[:8]}")
    grant_role(user, ANNOTATOR, project)
    client = Client()
    client.force_login(user)
    url = f"/api/projects/{project.pk}/next/"
    while (taken := client.post(url, content_type="application/json")).status_code != 204:
        client.post(f"/api/assignments/{taken.json()['id']}/submit/", {"finish_reason": "give_up", "note": "n"},
                    content_type="application/json")
    Project.objects.filter(pk=project.pk).update(quality_control_rate=1.0)
    handed = 0
    for _ in range(asks):
        taken = client.post(url, content_type="application/json")
        if taken.status_code != 204:
            handed += 1
            client.post(f"/api/assignments/{taken.json()['id']}/submit/", {"finish_reason": "give_up", "note": "n"},
                        content_type="application/json")
    gold_after = Assignment.objects.filter(project=project, is_quality_control=True).count()
    project.delete()
    ok = handed == 0
    print(f"  empty queue: {asks} asks after the first 204 at rate 1: {handed} hand-outs, {gold_after} gold  "
          f"{'ok' if ok else 'TELLS'}")
    return not ok


def _p(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def _drop_jobs():
    """Drop the gold scoring jobs this run published (no worker consumes the bench's broker)."""
    from annotator.celery import app

    try:
        app.control.purge()
    except Exception as exc:  # the filesystem broker's folder goes with the temporary directory
        print(f"(queued jobs not purged: {exc})")


if __name__ == "__main__":
    raise SystemExit(main())
