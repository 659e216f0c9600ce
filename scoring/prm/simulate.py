"""The replay simulator: does a selection strategy pay off, on a set people already labelled?

A fully labelled PRM800K file (PRM800K's own, or a project's export) stands in for the people:
a solution's ratings are "revealed" when a strategy chooses it. For each strategy, with the same
seed and budget:

1. round 0: a seed set of ``seed_size`` solutions drawn at random (the same for every strategy)
   trains the first PRM;
2. each later round scores the solutions not labelled yet with the previous round's PRM (the
   champion), chooses ``per_round`` of them by the strategy (``scoring.prm.strategies.choose``),
   adds their labels and retrains *from the base* on every label bought so far, as the loop's
   retrain does (``training_run.train_checkpoint`` with a ``TrainConfig``: the same function);
3. every round's PRM is evaluated on held-out problems that never train.

A *solution* is one PRM800K record: a trajectory and its rated alternatives, what one labelling
pass produces. Its PRM score (what ``convincing_wrong`` ranks) and its MC-dropout uncertainty
(``uncertainty``) are those of its trajectory. Its graded answer is the record's ``is_correct``
when it carries one, else, for a phase-2 record, whether ``pre_generated_answer`` equals
``ground_truth_answer`` (exact text, spaces ignored); phase-1 records have no answer of their
own and are ungraded (``convincing_wrong`` then ranks them all as its "rest").

Held out: the problems of ``--heldout FILE`` (pool records on those problems are dropped, so
nothing leaks) or a seeded share of the pool's problems. Figures per round: step AUROC over every
labelled step of the held-out examples (trajectories and alternatives), ProcessBench-style F1
(the earliest step below 0.5 against the first -1, per example: a trajectory stops at its first
-1 and an alternative follows an error-free prefix, so each example's first error is known), and
best-of-N (the PRM's top trajectory per problem) where held-out problems have two graded
solutions or more. Labels spent count both solutions and labelled steps.

The savings: for each strategy, the labels at which its curve first reaches random's final AUROC
(linear interpolation between rounds), against the labels random spent; "not reached" if never.

Plain functions, no Django; selection is seeded and deterministic, and training seeded.
"""
import dataclasses
import random
import shutil
import tempfile
import time
from pathlib import Path

from formats import prm800k
from formats.errors import FormatError
from scoring.prm import strategies
from scoring.prm.data import prm800k_examples, read_jsonl
from scoring.prm.metrics import (
    best_of_n,
    best_threshold,
    earliest_error,
    processbench,
    processbench_thresholds,
    step_metrics,
)
from scoring.prm.selection import Candidate
from scoring.prm.splits import split_by_problem

THRESHOLD = 0.5


@dataclasses.dataclass
class Solution:
    """One labelled solution of the pool: a PRM800K record read as training examples."""

    id: int  # position among the file's usable records
    line: int
    problem: str
    steps: list  # the trajectory's texts: what the PRM scores to choose
    examples: list  # its labelled ``Example`` s (trajectory and alternatives)
    is_correct: bool | None

    @property
    def labelled_steps(self):
        return sum(label is not None for e in self.examples for label in e.labels)


def graded_answer(record):
    """The record's graded final answer: True, False, or None (ungraded); see the module."""
    if isinstance(record.get("is_correct"), bool):
        return record["is_correct"]
    question = record.get("question") or {}
    answer, truth = question.get("pre_generated_answer"), question.get("ground_truth_answer")
    if isinstance(answer, str) and isinstance(truth, str):
        return "".join(answer.split()) == "".join(truth.split())
    return None


def read_pool(path, *, neutral="positive", limit=None):
    """The labelled solutions of a PRM800K file (records without a labelled step are skipped).

    Bad input raises ``FormatError`` naming the file, the line and the field.
    """
    pool = []
    for line, record in read_jsonl(path):
        if limit is not None and len(pool) >= limit:
            break
        examples = prm800k_examples(record, neutral=neutral, path=path, line=line)
        if not examples:
            continue
        try:
            texts, _ = prm800k.trajectory(record, neutral)
        except FormatError as exc:
            raise exc.at(path, line) from None
        is_correct = record.get("is_correct")
        if is_correct is not None and not isinstance(is_correct, bool):
            raise FormatError(f"expected true or false, got {type(is_correct).__name__}", path=path, line=line,
                              field="is_correct")
        pool.append(Solution(len(pool), line, examples[0].problem, texts or examples[0].steps, examples,
                             graded_answer(record)))
    if not pool:
        raise FormatError("no record with a labelled step", path=path)
    return pool


def split_pool(pool, *, heldout=None, fraction=None, seed=0):
    """``(pool, heldout, dropped)``: the held-out solutions never train.

    With ``heldout`` (solutions of another file) the pool loses every solution on one of its
    problems (``dropped`` counts them); else a seeded ``fraction`` of the pool's problems is held out.
    """
    if heldout is not None:
        problems = {s.problem for s in heldout}
        kept = [s for s in pool if s.problem not in problems]
        return kept, list(heldout), len(pool) - len(kept)
    kept, out = split_by_problem(pool, fraction=fraction, seed=seed)
    return kept, out, 0


def seed_set(pool, size, seed):
    """The round-0 solutions: ``size`` of the pool by a seeded shuffle, the same for every strategy."""
    ids = sorted(s.id for s in pool)
    random.Random(seed).shuffle(ids)
    return ids[:size]


def train_prm(solutions, *, base, config, device=None, max_length=None):
    """A PRM trained from ``base`` on the solutions' labels, as the loop's retrain trains it."""
    from scoring.prm.training_run import train_checkpoint

    examples = [e for s in solutions for e in s.examples]
    work = Path(tempfile.mkdtemp(prefix="stepmark-simulate-"))
    try:
        done = train_checkpoint(examples, work / "checkpoint", base=base,
                                config=dataclasses.replace(config, start_from="base"), device=device,
                                max_length=max_length, metrics=None)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return done.prm


def first_error(labels):
    """The first wrong step of an example (a label 0), -1 when none: what ProcessBench's label is."""
    return next((i for i, label in enumerate(labels) if label == 0), -1)


def evaluate_round(prm, heldout, *, threshold=THRESHOLD):
    """``{"auroc", "f1", "bon", ...}`` of ``prm`` on the held-out solutions (see the module)."""
    from scoring.prm.scorer import score_solutions

    examples = [e for s in heldout for e in s.examples]
    scored = score_solutions(prm, [(e.problem, e.steps) for e in examples])
    step_scores = [r.step_scores for r in scored]
    steps = step_metrics(step_scores, [e.labels for e in examples], threshold=threshold)
    errors = [first_error(e.labels) for e in examples]
    bench = processbench([earliest_error(s, threshold=threshold) for s in step_scores], errors)
    # the best any threshold does on these very items: an optimistic ceiling, beside the fixed 0.5
    try:
        oracle = best_threshold(processbench_thresholds(step_scores, errors))
    except ValueError:  # the held-out examples are all erroneous or all correct
        oracle = {"f1": None, "threshold": None}
    graded = [s for s in heldout if s.is_correct is not None]
    per_problem = {}
    for s in graded:
        per_problem[s.problem] = per_problem.get(s.problem, 0) + 1
    graded = [s for s in graded if per_problem[s.problem] >= 2]
    bon = None
    if graded:
        results = score_solutions(prm, [(s.problem, s.steps) for s in graded])
        bon = best_of_n([{"problem": s.problem, "score": r.score, "answer": s.id, "is_correct": s.is_correct}
                         for s, r in zip(graded, results)])["best_of_n"]
    return {"auroc": steps["auroc"], "f1": bench["f1"], "bon": bon, "f1_oracle": oracle["f1"],
            "oracle_threshold": oracle["threshold"], "step_f1_negative": steps["f1_negative"],
            "heldout_steps": steps["steps"], "heldout_examples": len(examples)}


def candidates(prm, solutions, problem_ids, *, dropout_passes=0):
    """The solutions as ``selection.Candidate`` s scored by ``prm`` (None: unscored, as ``random`` needs)."""
    if prm is None:
        return [Candidate(s.id, problem_ids[s.problem], None, s.is_correct) for s in solutions]
    from scoring.prm.scorer import score_solutions

    results = score_solutions(prm, [(s.problem, s.steps) for s in solutions], dropout_passes=dropout_passes)
    return [Candidate(s.id, problem_ids[s.problem], r.score, s.is_correct, r.uncertainty)
            for s, r in zip(solutions, results)]


def labels_to_reach(curve, target, *, key="steps"):
    """Labels (``key``: "steps" or "solutions") at which ``curve`` first reaches AUROC ``target``,
    by linear interpolation between its points; None when it never does."""
    points = [(p[key], p["auroc"]) for p in curve if p["auroc"] is not None]
    for n, (labels, value) in enumerate(points):
        if value >= target:
            if n == 0:
                return float(labels)
            before, was = points[n - 1]
            return before + (labels - before) * (target - was) / (value - was)
    return None


def savings(curves, *, baseline=strategies.RANDOM):
    """Per strategy: labels needed to reach the baseline's final AUROC, and the saving against it.

    ``{strategy: {"target", "steps_needed", "solutions_needed", "steps_saved", "solutions_saved",
    "reached", "by_seed_set"}}``; ``by_seed_set`` says the seed set alone reached it (the curve
    never rose past round 0: no saving can be read from it). The saving is the baseline's final labels minus those needed (a share of them in
    ``*_saved_share``), None with ``reached`` False when the curve never gets there.
    """
    if baseline not in curves or not curves[baseline] or curves[baseline][-1]["auroc"] is None:
        return {}
    final = curves[baseline][-1]
    target = final["auroc"]
    out = {}
    for name, curve in curves.items():
        row = {"target": target, "reached": False}
        for key in ("steps", "solutions"):
            needed = labels_to_reach(curve, target, key=key)
            row[f"{key}_needed"] = needed
            row[f"{key}_saved"] = None if needed is None else final[key] - needed
            row[f"{key}_saved_share"] = None if needed is None or not final[key] else (final[key] - needed) / final[key]
            row["reached"] = needed is not None
        # reached by the seed set already: the curve never rose past it, so no saving is measurable
        row["by_seed_set"] = row["reached"] and row["steps_needed"] == curve[0]["steps"]
        out[name] = row
    return out


def simulate(pool, heldout, *, names=(strategies.RANDOM, strategies.CONVINCING_WRONG), rounds=2, per_round=4,
             seed_size=4, seed=0, base, config, device=None, max_length=None, wrong_share=0.8, per_problem_cap=0,
             dropout_passes=strategies.DROPOUT_PASSES, log=None):
    """Run every strategy for ``rounds`` rounds after the seed set; returns the report (a dict).

    ``pool`` are the solutions that may be labelled, ``heldout`` those evaluated on (no problem in
    both: ``split_pool``). ``log(message)`` is told of each round.
    """
    for name in names:
        if name not in strategies.MIXABLE:
            raise ValueError(f"unknown strategy {name!r}; choose from {', '.join(strategies.MIXABLE)}")
    if rounds < 0 or per_round < 1 or seed_size < 1:
        raise ValueError("rounds must be >= 0, the per-round size and the seed set >= 1")
    if not heldout:
        raise ValueError("no held-out solutions to evaluate on")
    leaked = {s.problem for s in pool} & {s.problem for s in heldout}
    if leaked:
        raise ValueError(f"{len(leaked)} problem(s) are both in the pool and held out")
    need = seed_size + rounds * per_round
    if need > len(pool):
        raise ValueError(f"the seed set and {rounds} rounds of {per_round} need {need} solutions; the pool has {len(pool)}")
    log = log or (lambda message: None)
    by_id = {s.id: s for s in pool}
    problem_ids = {problem: n for n, problem in enumerate(sorted({s.problem for s in pool}))}
    started = time.monotonic()

    def point(round_, labelled, prm, picked):
        figures = evaluate_round(prm, heldout)
        return {"round": round_, "solutions": len(labelled), "steps": sum(by_id[i].labelled_steps for i in labelled),
                **figures, "picked": picked, "elapsed_s": round(time.monotonic() - started, 1)}

    seeds = seed_set(pool, seed_size, seed)
    prm0 = train_prm([by_id[i] for i in seeds], base=base, config=config, device=device, max_length=max_length)
    first = point(0, seeds, prm0, seeds)
    log(f"round 0 (seed set, every strategy): {first['solutions']} solutions, {first['steps']} steps, "
        f"AUROC {_fmt(first['auroc'])}")
    scored0 = {}  # the seed PRM's candidates, shared by the strategies' first rounds
    curves = {}
    for name in names:
        labelled, prm, curve = list(seeds), prm0, [first]
        for round_ in range(1, rounds + 1):
            taken = set(labelled)
            rest = [s for s in pool if s.id not in taken]
            passes = dropout_passes if strategies.needs_uncertainty(name) else 0
            if name == strategies.RANDOM:
                offered = candidates(None, rest, problem_ids)
            elif round_ == 1:
                if passes not in scored0:
                    scored0[passes] = candidates(prm0, [s for s in pool if s.id not in set(seeds)], problem_ids,
                                                 dropout_passes=passes)
                offered = scored0[passes]
            else:
                offered = candidates(prm, rest, problem_ids, dropout_passes=passes)
            picks = strategies.choose(offered, strategy=name, size=per_round, wrong_share=wrong_share,
                                      per_problem_cap=per_problem_cap, seed=seed * 1000 + round_)
            picked = [p.candidate.solution_id for p in picks]
            labelled += picked
            if prm is not prm0:
                del prm
            prm = train_prm([by_id[i] for i in labelled], base=base, config=config, device=device, max_length=max_length)
            curve.append(point(round_, labelled, prm, picked))
            log(f"{name} round {round_}: {curve[-1]['solutions']} solutions, {curve[-1]['steps']} steps, "
                f"AUROC {_fmt(curve[-1]['auroc'])}, F1 {_fmt(curve[-1]['f1'])}")
        curves[name] = curve
    return {"strategies": list(names), "rounds": rounds, "per_round": per_round, "seed_size": seed_size,
            "seed": seed, "seed_set": seeds, "pool": len(pool), "heldout_solutions": len(heldout),
            "heldout_problems": len({s.problem for s in heldout}), "wrong_share": wrong_share,
            "per_problem_cap": per_problem_cap, "dropout_passes": dropout_passes, "config": dataclasses.asdict(config),
            "curves": curves, "savings": savings(curves), "wall_s": round(time.monotonic() - started, 1)}


def _fmt(value):
    return "n/a" if value is None else f"{value:.3f}"


def table(report):
    """The learning curves and the savings as Markdown."""
    lines = ["| strategy | round | solutions | labelled steps | step AUROC | ProcessBench-style F1 (at 0.5) "
             "| F1 at the best threshold (ceiling) | best-of-N |",
             "|---|---|---|---|---|---|---|---|"]
    for name, curve in report["curves"].items():
        for p in curve:
            lines.append(f"| {name} | {p['round']} | {p['solutions']} | {p['steps']} | {_fmt(p['auroc'])} | "
                         f"{_fmt(p['f1'])} | {_fmt(p['f1_oracle'])} | {_fmt(p['bon'])} |")
    lines += ["", "| strategy | labelled steps to reach random's final AUROC | solutions | saving (steps) | saving (solutions) |",
              "|---|---|---|---|---|"]
    for name, row in report["savings"].items():
        if not row["reached"]:
            lines.append(f"| {name} | not reached | not reached | - | - |")
            continue
        if row["by_seed_set"]:
            lines.append(f"| {name} | {row['steps_needed']:.0f} (the seed set already) | {row['solutions_needed']:.1f} | "
                         "none measurable | none measurable |")
            continue
        lines.append(f"| {name} | {row['steps_needed']:.0f} | {row['solutions_needed']:.1f} | "
                     f"{row['steps_saved']:.0f} ({row['steps_saved_share']:.0%}) | "
                     f"{row['solutions_saved']:.1f} ({row['solutions_saved_share']:.0%}) |")
    return "\n".join(lines)
