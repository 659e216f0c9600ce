"""Retraining the PRM on the project's ratings, and promoting it only when it is better.

A retrain is due when ``project.retrain_threshold`` submitted passes arrived since the last
checkpoint was trained. It exports the project as PRM800K JSONL (``labeling.exports``), trains
a fresh PRM on the project's base model with the core's ``train_checkpoint`` (the same run as
``python -m scoring train``), and evaluates the new PRM and the champion on the same held-out
problems. Held-out problems never train: the core's stable ``split_by_problem`` holds out
``HELDOUT_FRACTION`` of the problems by a hash of their statement, so the split is the same in
every round and a problem that arrives later lands on the same side forever.

The new checkpoint becomes the champion only when the promotion gate (``scoring.prm.gate``) lets
it past the champion: enough held-out problems (``promotion_min_problems``), a gain on the
project's ``retrain_metric`` that holds at ``promotion_confidence`` by a paired bootstrap over the
held-out problems, and log loss and calibration error no worse than the champion's beyond
``promotion_guard_tolerance``. Otherwise it is kept as ``rejected`` with the reason. The gate's
decision goes on the checkpoint (``metrics["gate"]``). Every checkpoint keeps its metrics and
lineage (parent, data hash, generation, passes).

A project's ``train_settings`` say how: ``start_from`` "base" (the default) trains a fresh PRM on
the base model, "champion" fine-tunes the champion on the labels, in whatever layout it was
registered (a Stepmark checkpoint or a published PRM: its ``layout`` and ``layout_options`` go
to the run, which trains and saves it in that layout); ``processes`` and
``accelerate_config`` spread the training over several processes (``scoring.prm.launch``), LoRA
and the rest as ``scoring.prm.train.TrainConfig`` has them. The checkpoint's lineage (its
metrics and its stepmark_prm.json) records where it started.

Crash safety: the Checkpoint row is created (status ``training``) before the work; a
redelivered job finds it and resumes the training from the Trainer's last checkpoint (kept in
``checkpoint-N.trainer`` beside it, while the data and settings are the same; otherwise it
starts again); the directory is written by ``save_checkpoint`` atomically, and staging leftovers
of a killed run are removed first.
"""
import dataclasses
import shutil
import tempfile
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from labeling import audit
from labeling.exports import ExportFilters, write_export
from labeling.models import Generation, Project, Solution
from scoring import worker
from scoring.champions import TRAINING_NEUTRAL, base_model, champion, checkpoint_root, ensure_champion
from labeling.locks import RETRAIN_LOCK, advisory_lock
from scoring.models import Checkpoint
from scoring.prm.metrics import PROMOTION_METRICS
from scoring.progress import RetrainProgress
from scoring.standing import passes_count

HELDOUT_FRACTION = 0.2
# name -> (key in ``evaluate``'s figures, whether higher is better), from the core's one list
METRICS = {name: (name, higher) for name, (_label, higher) in PROMOTION_METRICS.items()}


def last_trained(project):
    """The newest checkpoint that was built to the end (champion or rejected), or None."""
    done = (Checkpoint.CHAMPION, Checkpoint.REJECTED)
    return Checkpoint.objects.filter(project=project, status__in=done).order_by("-pk").first()


def retrain_due(project):
    """Whether ``retrain_threshold`` new passes arrived since the last checkpoint (0: never)."""
    if not project.retrain_threshold:
        return False
    last = last_trained(project)
    return passes_count(project) - (last.passes if last else 0) >= project.retrain_threshold


def evaluate(prm, examples, candidates=()):
    """``prm`` on labelled examples (and graded candidates): ``(figures, report sections, step scores)``.

    The figures are step AUROC, F1 on wrong steps and log loss; the sections are those of
    ``scoring.prm.evaluate`` (what ``python -m scoring evaluate`` writes in report.json): ``steps``
    (with the ROC curve and the reliability table) and, when ``candidates`` are given,
    ``best-of-n``. The researcher's page draws them. The step scores (one list per example) are
    what the promotion gate resamples (``paired_heldout``); they are not stored.
    """
    from scoring.prm.evaluate import best_of_n_protocol, steps_protocol
    from scoring.prm.scorer import score_solutions

    scored = score_solutions(prm, [(e.problem, e.steps) for e in examples])
    step_scores = [s.step_scores for s in scored]
    labels = [e.labels for e in examples]
    steps = steps_protocol([{"step_scores": s, "labels": y} for s, y in zip(step_scores, labels)])
    figures = {"examples": len(examples), "steps": steps["steps"], "negative_steps": steps["negative_steps"],
               "step_auroc": steps["auroc"], "step_f1": steps["f1_negative"], "accuracy": steps["accuracy"],
               "log_loss": steps["log_loss"]}
    sections = {"steps": steps}
    if candidates:
        results = score_solutions(prm, [(c["problem"], c["steps"]) for c in candidates], aggregation="prod")
        records = [{**c, "step_scores": r.step_scores, "score": r.score, "aggregation": "prod"}
                   for c, r in zip(candidates, results)]
        sections["best-of-n"] = best_of_n_protocol(records)
    return figures, sections, step_scores


def paired_heldout(heldout, challenger, champion_scores):
    """The held-out steps both models scored, grouped by problem, for the promotion gate.

    ``challenger`` and ``champion_scores`` are ``evaluate``'s step scores of ``heldout``; None
    when either model was not scored (no held-out problem, or no champion).
    """
    from scoring.prm.gate import by_problem

    if challenger is None or champion_scores is None:
        return None
    return by_problem([e.problem for e in heldout], [e.labels for e in heldout], challenger, champion_scores)


def gate_rules(project):
    """The project's promotion gate settings as the gate takes them (the draws are the deployment's)."""
    from scoring.prm.gate import Rules

    return Rules(min_problems=project.promotion_min_problems, confidence=project.promotion_confidence,
                 guard_tolerance=project.promotion_guard_tolerance, resamples=settings.STEPMARK_GATE_RESAMPLES)


# Best-of-N on the held-out problems: their graded solutions, a few per problem, so that a
# retrain of a large project does not score its whole pool twice.
BEST_OF_N_PER_PROBLEM = 8
BEST_OF_N_PROBLEMS = 100


def heldout_candidates(project, heldout):
    """Graded solutions of the held-out problems with two or more of them, for best-of-N (capped)."""
    from scoring.jobs import solution_texts

    texts = sorted({e.problem for e in heldout})
    rows = (Solution.objects.filter(project=project, problem__problem__in=texts, is_correct__isnull=False,
                                    final_answer__isnull=False, is_gold=False, is_screening=False)
            .order_by("problem_id", "pk").values_list("pk", "problem_id", "final_answer", "is_correct"))
    by_problem = {}
    for pk, problem, answer, correct in rows:
        kept = by_problem.setdefault(problem, [])
        if len(kept) < BEST_OF_N_PER_PROBLEM:
            kept.append((pk, answer, correct))
    chosen = [group for group in by_problem.values() if len(group) >= 2][:BEST_OF_N_PROBLEMS]
    steps = solution_texts([pk for group in chosen for pk, _, _ in group])
    return [{"problem": steps[pk][0], "steps": steps[pk][1], "answer": answer, "is_correct": correct}
            for group in chosen for pk, answer, correct in group]


def mark_checkpoint_failed(checkpoint_id, error):
    """Record why training failed for good (the researcher's page shows it)."""
    Checkpoint.objects.filter(pk=checkpoint_id, status=Checkpoint.TRAINING).update(
        status=Checkpoint.FAILED, reason=str(error)[:10000], finished_at=timezone.now()
    )


def retrain_if_due(project_id, *, force=False, task_id=""):
    """Train, evaluate and maybe promote a new checkpoint when one is due (or ``force``).

    Resumes a checkpoint left ``training`` by a worker that died. Returns the checkpoint
    (None when nothing was due, or another worker is training this project now).
    """
    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        return None
    with advisory_lock(RETRAIN_LOCK, project.pk) as acquired:
        if not acquired:
            return None
        checkpoint = Checkpoint.objects.filter(project=project, status=Checkpoint.TRAINING).order_by("pk").first()
        if checkpoint is None:
            if not force and not retrain_due(project):
                return None
            parent = ensure_champion(project)
            checkpoint = Checkpoint.objects.create(project=project, parent=parent, status=Checkpoint.TRAINING,
                                                   metrics={"forced": force}, task_id=task_id)
        elif task_id:
            Checkpoint.objects.filter(pk=checkpoint.pk).update(task_id=task_id)
        try:
            return retrain(checkpoint)
        except Exception as exc:
            mark_checkpoint_failed(checkpoint.pk, f"{type(exc).__name__}: {exc}")
            raise


def retrain(checkpoint):
    """Build ``checkpoint`` (status ``training``): export, train, evaluate, save, judge.

    Each phase is written on the row as it starts (``scoring.progress``), the training steps
    with their loss and the time left; the evaluation's plot data goes to ``report``.
    """
    from scoring.prm.checkpoint import file_hash
    from scoring.prm.data import read_prm800k
    from scoring.prm.splits import split_by_problem
    from scoring.prm.train import TrainConfig
    from scoring.prm.training_run import train_checkpoint

    project = checkpoint.project
    progress = RetrainProgress(checkpoint.pk)
    progress.phase("exporting")
    path = checkpoint_root(project) / f"checkpoint-{checkpoint.pk}"
    log_path = path.with_name(path.name + ".train.jsonl")
    remove_staging(path)
    log_path.unlink(missing_ok=True)
    passes = passes_count(project)
    generation = Generation.objects.filter(project=project, number__gte=1).aggregate(n=Max("number"))["n"]
    with tempfile.TemporaryDirectory(prefix="stepmark-retrain-") as tmp:
        export = Path(tmp) / "prm800k.jsonl"
        write_export("prm800k", ExportFilters(project_id=project.pk), export)
        data_hash = file_hash(export)
        examples = read_prm800k(export, neutral=TRAINING_NEUTRAL)
    base = base_model(project)
    forced = checkpoint.metrics.get("forced", False)
    Checkpoint.objects.filter(pk=checkpoint.pk).update(
        path=str(path), passes=passes, generation=generation, data_hash=data_hash, base_model=str(base),
        metrics={"forced": forced, "training_log": str(log_path)},
    )
    checkpoint.refresh_from_db()
    train_set, heldout = split_by_problem(examples, fraction=HELDOUT_FRACTION)  # stable: no seed
    if not train_set:
        return _finish(checkpoint, Checkpoint.FAILED, "No labelled steps outside the held-out problems yet.")
    try:
        config = TrainConfig(**(project.train_settings or {}))
    except TypeError as exc:
        return _finish(checkpoint, Checkpoint.FAILED, f"Bad train_settings on the project: {exc}")
    current = champion(project)
    start, run_config, reading = starting_point(checkpoint, config)
    work_dir = path.with_name(path.name + ".trainer")
    resume = resumable(work_dir, data_hash, run_config)
    report, paired = {}, []

    def judged(prm, summary, _validation):
        # the new PRM and the champion on the same held-out problems, for ``promote``
        progress.phase("evaluating")
        new, old = (None, {}, None), (None, {}, None)
        if heldout:
            candidates = heldout_candidates(project, heldout)
            new = evaluate(prm, heldout, candidates)
            if current:
                old = evaluate(worker.get_prm(current), heldout, candidates)
        paired[:] = [paired_heldout(heldout, new[2], old[2])]
        report.update(heldout_problems=len({e.problem for e in heldout}), metric=project.retrain_metric,
                      champion_id=current.pk if current else None, challenger=new[1], champion=old[1])
        progress.phase("saving")
        return {"forced": forced, "training_log": str(log_path), "metric": project.retrain_metric,
                "heldout_problems": len({e.problem for e in heldout}), "train": summary,
                "heldout": new[0], "champion_id": current.pk if current else None,
                "champion_heldout": old[0], "config": dataclasses.asdict(config), **start}

    meta = {"neutral": TRAINING_NEUTRAL, "aggregation": "prod",
            "training_data": [{"project": project.pk, "sha256": data_hash, "passes": passes}],
            "parent": checkpoint.parent.path if checkpoint.parent else None,
            "lineage": {**start, "parent_id": checkpoint.parent_id}}
    worker._limit_threads()
    progress.phase("training", step=0, total_steps=None, loss=None, eta_s=None)
    done = train_checkpoint(train_set, path, base=base, config=run_config, device=worker.device(), log_path=log_path,
                            meta=meta, metrics=judged, on_step=progress.step, work_dir=work_dir, resume=resume,
                            **reading)
    shutil.rmtree(work_dir, ignore_errors=True)  # the Trainer's checkpoints: the run is whole now
    Checkpoint.objects.filter(pk=checkpoint.pk).update(metrics=done.metrics, report=report)
    checkpoint.refresh_from_db()
    return promote(checkpoint, current, paired[0] if paired else None)


def starting_point(checkpoint, config):
    """Where the retrain of ``checkpoint`` starts, and the config it trains with.

    ``start_from`` "base" (the default) trains a fresh head on the project's base model;
    "champion" fine-tunes the champion the checkpoint was started beside (its parent) on the
    labels, read in the layout it was registered in. Returns ``({"start_from",
    "init_checkpoint_id", "init_layout"}, config, reading)``, the config's ``start_from`` being
    the parent's directory when fine-tuning and ``reading`` the ``start_layout`` and
    ``start_options`` that ``train_checkpoint`` reads it with (the parent's ``layout`` and
    ``layout_options``).
    """
    parent = checkpoint.parent
    if config.start_from == "champion" and parent is not None:
        layout = parent.layout or "stepmark"
        return ({"start_from": "champion", "init_checkpoint_id": parent.pk, "init_layout": layout},
                dataclasses.replace(config, start_from=parent.path),
                {"start_layout": layout, "start_options": dict(parent.layout_options or {})})
    return ({"start_from": "base", "init_checkpoint_id": None, "init_layout": None},
            dataclasses.replace(config, start_from="base"), {})


RUN_FILE = "stepmark_run.json"


def resumable(work_dir, data_hash, config):
    """Whether the Trainer's checkpoints in ``work_dir`` belong to this very run (same data, same
    settings): a redelivered retrain then resumes from the last one; otherwise they are removed."""
    import json

    fingerprint = {"data_hash": data_hash, "config": dataclasses.asdict(config)}
    marker = work_dir / RUN_FILE
    try:
        same = json.loads(marker.read_text(encoding="utf-8")) == fingerprint
    except (OSError, ValueError):
        same = False
    if not same:
        shutil.rmtree(work_dir, ignore_errors=True)
        work_dir.mkdir(parents=True)
        marker.write_text(json.dumps(fingerprint), encoding="utf-8")
    return same


def promote(checkpoint, current, problems=None):
    """Make ``checkpoint`` the champion when the promotion gate lets it past ``current``.

    Both were scored on the same held-out problems: ``checkpoint.metrics`` holds the figures,
    ``problems`` the steps grouped by problem (``paired_heldout``), which the gate
    (``scoring.prm.gate.decide``) judges with the project's settings; its decision goes on the
    checkpoint as ``metrics["gate"]``. With no champion to keep, a checkpoint whose figure is
    defined is promoted. A refusal keeps the checkpoint as ``rejected`` with the reason.
    """
    from scoring.prm.gate import PROMOTE, decide

    project = checkpoint.project
    metric = project.retrain_metric
    if metric not in METRICS:
        return _finish(checkpoint, Checkpoint.REJECTED,
                       f"Unknown retrain metric {metric!r}; choose from {', '.join(METRICS)}.")
    new = (checkpoint.metrics.get("heldout") or {}).get(METRICS[metric][0])
    if checkpoint.metrics.get("heldout") is None:
        return _finish(checkpoint, Checkpoint.REJECTED, "No held-out problems are rated yet: nothing to judge it on.")
    if current is None:
        if new is None:
            return _finish(checkpoint, Checkpoint.REJECTED,
                           f"{metric} is undefined on the held-out set (it needs both correct and incorrect steps).")
        reason = f"Promoted: {metric} {new:.4f} on the held-out set, and there was no champion."
    elif problems is None:
        return _finish(checkpoint, Checkpoint.REJECTED,
                       f"The champion (checkpoint {current.pk}) was not scored on the held-out problems: "
                       "nothing to judge it against.")
    else:
        decision = decide(problems, metric, gate_rules(project))
        checkpoint.metrics = {**checkpoint.metrics, "gate": {**decision, "champion_id": current.pk}}
        Checkpoint.objects.filter(pk=checkpoint.pk).update(metrics=checkpoint.metrics)
        if decision["decision"] != PROMOTE:
            return _finish(checkpoint, Checkpoint.REJECTED, decision["reason"])
        reason = decision["reason"]
    with transaction.atomic():
        Project.objects.select_for_update().filter(pk=project.pk).first()
        now_champion = Checkpoint.objects.filter(project=project, is_champion=True).first()
        if current is not None and now_champion is not None and now_champion.pk != current.pk:
            return _finish(checkpoint, Checkpoint.REJECTED,
                           f"The champion changed to checkpoint {now_champion.pk} while this one trained.")
        Checkpoint.objects.filter(project=project, is_champion=True).update(is_champion=False)
        audit.record(project, None, audit.PROMOTION, target=f"checkpoint {checkpoint.pk}",
                     before={"champion": current.pk if current is not None else None, "status": checkpoint.status},
                     after={"champion": checkpoint.pk}, reason=reason)
        return _finish(checkpoint, Checkpoint.CHAMPION, reason, is_champion=True)


def _finish(checkpoint, status, reason, *, is_champion=False):
    checkpoint.status, checkpoint.reason, checkpoint.is_champion = status, reason, is_champion
    checkpoint.finished_at = timezone.now()
    checkpoint.save(update_fields=["status", "reason", "is_champion", "finished_at"])
    return checkpoint


def remove_staging(path):
    """Remove what a killed ``save_checkpoint`` left beside ``path`` (its hidden temporary dirs)."""
    path = Path(path)
    if not path.parent.is_dir():
        return
    for leftover in path.parent.glob(f".{path.name}.*"):
        shutil.rmtree(leftover, ignore_errors=True)
