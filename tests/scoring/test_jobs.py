"""The loop's jobs on the real database, without Celery: scoring, selection, retraining, promotion, and
the progress each writes (a run's states, a retrain's phases and the evaluation report it keeps).

The PRM is a tiny random BERT (tests/scoring/conftest.py) on the project's base model; the
candidate pool is a slice of GSM8K's real model solutions.
"""
import collections
from pathlib import Path

import pytest
from django.conf import settings

from labeling.data import open_text
from labeling.imports import run_import
from labeling.models import Annotator, Assignment, Generation, LabelSource, Project, Rating, Solution, StepLabel
from labeling.work import queue
from labeling.work.submission import submit
from scoring import jobs, prelabels, runs, worker
from scoring.champions import champion, ensure_champion
from scoring.models import Checkpoint, GenerationRun, SolutionScore
from scoring.progress import RetrainProgress
from scoring.retrain import retrain_if_due
from tests.conftest import TEST_GATE_RESAMPLES
from tests.factories import analyze_counts, make_project

PROBLEMS = 12  # x 4 model solutions each


@pytest.fixture
def checkpoint_dir(settings, tmp_path):
    settings.STEPMARK_CHECKPOINT_DIR = tmp_path / "checkpoints"
    return settings.STEPMARK_CHECKPOINT_DIR


@pytest.fixture
def gsm8k_slice(tmp_path, data_dir):
    path = tmp_path / "gsm8k-slice.jsonl"
    with open_text(data_dir / "gsm8k" / "example_model_solutions.jsonl.gz") as source:
        path.write_text("".join(line for _, line in zip(range(PROBLEMS), source)), encoding="utf-8")
    return path


@pytest.fixture
def project(db, tiny_bases, gsm8k_slice, checkpoint_dir):
    project = make_project(
        name="loop", overlap=2, generation_size=8, selection_wrong_share=0.75, base_model_path=str(tiny_bases["bert"]),
        retrain_threshold=6, retrain_metric="log_loss", train_settings={"epochs": 2, "max_batch": 8, "val_fraction": 0.2},
        promotion_min_problems=1,  # 12 problems: a handful are held out; the gate judges them all the same
    )
    run_import("gsm8k-examples", gsm8k_slice, project)
    return project


def run_one(project, **kwargs):
    run = runs.start_generation(project)
    return jobs.run_generation(run.pk, **kwargs)


def rate_everything(project, annotators=2, passes=8):
    """Each annotator rates ``passes`` hand-outs: +1 steps, -1 on the last step of wrong answers."""
    submitted = 0
    for n in range(annotators):
        annotator = Annotator.objects.create()
        for _ in range(passes):
            assignment = queue.next_assignment(annotator, project)
            solution = assignment.solution
            last = solution.num_steps - 1
            wrong = solution.is_correct is False
            ratings = [{"position": p, "value": -1 if wrong and p == last else 1} for p in range(last + 1)]
            submit(assignment, finish_reason="found_error" if wrong else "solution", ratings=ratings)
            submitted += 1
    return submitted


def test_a_generation_scores_the_pool_and_selects_convincing_wrong_answers(project):
    pool_size = runs.candidate_pool(project).count()
    assert pool_size == PROBLEMS * 4
    run = run_one(project, batch_size=10)
    assert run.state == GenerationRun.DONE and run.error == ""
    assert run.total == run.scored == pool_size
    assert run.checkpoint.is_champion and "Initial PRM" in run.checkpoint.reason
    assert SolutionScore.objects.filter(checkpoint=run.checkpoint).count() == pool_size
    assert run.generation.number == 1 and run.selected == 8
    chosen = list(Solution.objects.filter(generation=run.generation).order_by("selection_rank"))
    assert [s.selection_rank for s in chosen] == list(range(1, 9))
    scores = dict(SolutionScore.objects.filter(checkpoint=run.checkpoint).values_list("solution_id", "score"))
    assert all(s.verifier_score == scores[s.pk] for s in chosen)
    assert sum(s.is_correct is False for s in chosen) == 6  # 0.75 of 8
    wrong_pool = [scores[pk] for pk in Solution.objects.filter(project=project, is_correct=False).values_list("pk", flat=True)]
    top_wrong = sorted(wrong_pool, reverse=True)[:6]
    assert sorted(s.verifier_score for s in chosen if s.is_correct is False) == sorted(top_wrong)
    # The queue serves the generation in rank order.
    first = queue.next_assignment(Annotator.objects.create(), project)
    assert first.solution_id == chosen[0].pk and first.generation == 1
    # The champion's step scores of what it chose are kept as its labels, beside people's ratings.
    source = LabelSource.objects.get(project=project, kind=LabelSource.PRM)
    assert source.details["checkpoint_id"] == run.checkpoint_id
    step_scores = dict(SolutionScore.objects.filter(checkpoint=run.checkpoint).values_list("solution_id", "step_scores"))
    labels = StepLabel.objects.filter(source=source).values_list("step__solution_id", "step__position", "value", "score")
    assert {s for s, _, _, _ in labels} == {s.pk for s in chosen}
    for solution_id, position, value, score in labels:
        assert score == step_scores[solution_id][position] and value == (1 if score >= 0.5 else -1)
    assert len(labels) == sum(s.num_steps for s in chosen)
    assert prelabels.record(run.checkpoint, [s.pk for s in chosen]) == len(labels)  # again: nothing new
    assert StepLabel.objects.filter(source=source).count() == len(labels)


def _reasons(generation):
    return list(Solution.objects.filter(generation=generation).order_by("selection_rank")
                .values_list("pk", "selection_reason", "verifier_score", "is_correct"))


def test_the_default_generation_records_convincing_wrong_and_why_each_was_picked(project):
    run = run_one(project, batch_size=10)
    assert run.generation.strategy == "convincing_wrong" and run.generation.selection["dropout_passes"] == 0
    for _, reason, score, is_correct in _reasons(run.generation):
        assert reason == {"strategy": "convincing_wrong", "score": score, "uncertainty": None,
                          "answer": {True: "right", False: "wrong", None: "ungraded"}[is_correct]}
    assert not SolutionScore.objects.filter(checkpoint=run.checkpoint, dropout_passes__gt=0).exists()


def test_a_random_generation_records_its_strategy_seed_and_reasons(project):
    Project.objects.filter(pk=project.pk).update(selection_strategy="random")
    project.refresh_from_db()
    run = run_one(project, batch_size=10)
    generation = run.generation
    assert (run.strategy, generation.strategy) == ("random", "random")
    assert generation.selection == {"mix": {}, "wrong_share": 0.75, "per_problem_cap": 0, "seed": run.pk,
                                    "dropout_passes": 0}
    reasons = _reasons(generation)
    assert len(reasons) == 8
    assert {reason["strategy"] for _, reason, _, _ in reasons} == {"random"}
    assert all(reason["score"] == score and reason["uncertainty"] is None for _, reason, score, _ in reasons)


def test_a_mixture_measures_uncertainty_where_a_plain_run_scored_without_it(project):
    first = run_one(project, batch_size=10)  # convincing_wrong: scores without dropout
    mix = {"convincing_wrong": 0.5, "uncertainty": 0.25, "random": 0.25}
    Project.objects.filter(pk=project.pk).update(selection_strategy="mixture", selection_mix=mix)
    project.refresh_from_db()
    run = run_one(project, batch_size=10)
    assert run.state == GenerationRun.DONE and run.checkpoint_id == first.checkpoint_id
    assert (run.generation.strategy, run.generation.selection["mix"]) == ("mixture", mix)
    assert run.generation.selection["dropout_passes"] == 4
    pool = Solution.objects.filter(project=project).exclude(generation=first.generation).values("pk")  # as it was
    measured = SolutionScore.objects.filter(checkpoint=run.checkpoint, solution__in=pool)
    assert measured.count() == measured.filter(dropout_passes=4, uncertainty__gt=0).count() > 0
    reasons = _reasons(run.generation)
    by = collections.Counter(reason["strategy"] for _, reason, _, _ in reasons)
    assert by == {"convincing_wrong": 4, "uncertainty": 2, "random": 2}
    assert all(reason["uncertainty"] is not None for _, reason, _, _ in reasons)
    # what uncertainty took is the most uncertain of what convincing_wrong left
    before = {pk for pk, reason, _, _ in reasons if reason["strategy"] == "convincing_wrong"}
    left = sorted(SolutionScore.objects.filter(checkpoint=run.checkpoint, solution__in=pool)
                  .exclude(solution__in=before).values_list("uncertainty", flat=True), reverse=True)
    assert sorted((r["uncertainty"] for _, r, _, _ in reasons if r["strategy"] == "uncertainty"), reverse=True) == left[:2]


def test_a_run_keeps_the_strategy_it_was_started_with(project):
    run = runs.start_generation(project)
    Project.objects.filter(pk=project.pk).update(selection_strategy="random")
    assert jobs.run_generation(run.pk, batch_size=10).generation.strategy == "convincing_wrong"


def test_a_generation_ends_by_analysing_what_it_wrote(project):
    before = analyze_counts(Solution, SolutionScore)
    run_one(project, batch_size=10)
    assert analyze_counts(Solution, SolutionScore) == {model: n + 1 for model, n in before.items()}


def test_a_rerun_does_nothing_and_an_interrupted_run_continues_without_duplicates(project):
    run = run_one(project, batch_size=10)
    again = jobs.run_generation(run.pk)
    assert again.selected == 8 and Generation.objects.filter(project=project).count() == 1
    # A second run, cut off after its first batch: its state says scoring, a few scores are written.
    second = runs.start_generation(project)
    checkpoint = ensure_champion(project)
    pool = list(runs.candidate_pool(project).order_by("pk").values_list("pk", flat=True))
    GenerationRun.objects.filter(pk=second.pk).update(state=GenerationRun.SCORING, checkpoint=checkpoint)
    # The second run reuses the first run's scores (same checkpoint): nothing is scored twice.
    before = SolutionScore.objects.count()
    done = jobs.run_generation(second.pk, batch_size=7)
    assert done.state == GenerationRun.DONE and done.total == done.scored == len(pool)
    assert SolutionScore.objects.count() == before
    assert done.generation.number == 2 and done.selected == 8
    assert not Solution.objects.filter(generation=done.generation, pk__in=Solution.objects.filter(
        generation=run.generation)).exists()


def test_scores_written_before_a_crash_are_kept_and_the_rest_scored(project):
    run = runs.start_generation(project)
    checkpoint = ensure_champion(project)
    first_ids = list(runs.candidate_pool(project).order_by("pk").values_list("pk", flat=True)[:5])
    SolutionScore.objects.bulk_create(SolutionScore(solution_id=pk, checkpoint=checkpoint, score=0.5, step_scores=[0.5])
                                      for pk in first_ids)
    GenerationRun.objects.filter(pk=run.pk).update(state=GenerationRun.SCORING, checkpoint=checkpoint)
    done = jobs.run_generation(run.pk, batch_size=9)
    assert done.state == GenerationRun.DONE and done.scored == done.total == PROBLEMS * 4
    assert SolutionScore.objects.filter(checkpoint=checkpoint).count() == PROBLEMS * 4
    assert set(SolutionScore.objects.filter(solution_id__in=first_ids).values_list("score", flat=True)) == {0.5}


def test_cancelled_run_scores_nothing_and_selects_nothing(project):
    run = runs.start_generation(project)
    assert runs.cancel_run(run) and run.state == GenerationRun.CANCELLED
    done = jobs.run_generation(run.pk)
    assert done.state == GenerationRun.CANCELLED and done.generation is None
    assert not SolutionScore.objects.exists() and not Generation.objects.exists()
    assert not runs.cancel_run(done)  # finished runs stay as they are


def test_a_cancel_while_scoring_stops_between_batches(project):
    run = runs.start_generation(project)
    GenerationRun.objects.filter(pk=run.pk).update(state=GenerationRun.SCORING)
    runs.cancel_run(run)
    run.checkpoint = ensure_champion(project)
    assert jobs.score_pool(run, worker.get_prm(run.checkpoint), batch_size=5) is False
    assert not SolutionScore.objects.exists()


def test_one_open_run_per_project(project):
    first = runs.start_generation(project)
    with pytest.raises(runs.JobConflict) as refused:
        runs.start_generation(project)
    assert refused.value.existing == first


def test_handed_out_and_selected_solutions_are_never_selected_again(project):
    taken = Solution.objects.filter(project=project, is_correct=False).order_by("pk").first()
    annotator = Annotator.objects.create()
    Assignment.objects.create(project=project, solution=taken, annotator=annotator)
    run = run_one(project)
    assert run.state == GenerationRun.DONE and run.selected > 0
    assert not Solution.objects.filter(pk=taken.pk, generation__isnull=False).exists()
    assert SolutionScore.objects.filter(solution=taken).count() == 0  # not in the pool, not scored


def test_the_worker_keeps_the_champion_warm_and_reloads_on_a_new_one(project, monkeypatch):
    checkpoint = ensure_champion(project)
    monkeypatch.setattr(worker, "_models", collections.OrderedDict())  # a cold cache
    loads = worker.loads
    first = worker.get_prm(checkpoint)
    assert worker.get_prm(checkpoint) is first and worker.loads == loads + 1
    other = Checkpoint.objects.create(project=project, path=checkpoint.path, status=Checkpoint.REJECTED)
    assert worker.get_prm(other) is not first and worker.loads == loads + 2
    assert [pk for pk, _ in worker._models][-1] == other.pk  # the newest is kept last


def test_retrain_when_due_promotes_a_better_checkpoint_and_the_next_generation_uses_it(project):
    first = run_one(project)
    assert retrain_if_due(project.pk) is None  # no passes yet: not due
    passes = rate_everything(project)
    assert passes == 16
    assert not Assignment.objects.filter(solution__generation__isnull=True).exists()  # the generation came first
    checkpoint = retrain_if_due(project.pk)
    assert checkpoint is not None and checkpoint.status in (Checkpoint.CHAMPION, Checkpoint.REJECTED)
    assert checkpoint.parent == first.checkpoint and checkpoint.generation == 1
    assert checkpoint.passes == Assignment.objects.filter(project=project, state="submitted").count()
    assert len(checkpoint.data_hash) == 64
    assert checkpoint.metrics["heldout"]["steps"] == checkpoint.metrics["champion_heldout"]["steps"] > 0
    assert (Path(checkpoint.path) / "stepmark_prm.json").is_file()
    assert not list(Path(checkpoint.path).parent.glob(".*tmp-*"))
    assert checkpoint.status == Checkpoint.CHAMPION, checkpoint.reason
    assert checkpoint.metrics["heldout"]["log_loss"] < checkpoint.metrics["champion_heldout"]["log_loss"]
    assert Checkpoint.objects.filter(project=project, is_champion=True).get() == checkpoint
    assert retrain_if_due(project.pk) is None  # nothing new since
    # The next generation is scored and selected by the new champion.
    second = run_one(project)
    assert second.checkpoint == checkpoint
    assert SolutionScore.objects.filter(checkpoint=checkpoint).count() == second.total


def test_a_refused_checkpoint_keeps_its_reason(project):
    run_one(project)
    rate_everything(project)
    project.retrain_metric = "step_f1"
    project.train_settings = {"max_steps": 1, "lr": 1e-9}  # learns nothing: cannot beat the champion
    project.save()
    checkpoint = retrain_if_due(project.pk, force=True)
    assert checkpoint.status == Checkpoint.REJECTED and checkpoint.reason.startswith("Not better beyond noise: step_f1")
    assert not checkpoint.is_champion and champion(project) == checkpoint.parent
    assert checkpoint.metrics["forced"] is True
    gate = checkpoint.metrics["gate"]
    assert gate["decision"] == "reject" and gate["reason"] == checkpoint.reason
    assert gate["problems"] == checkpoint.metrics["heldout_problems"] and gate["champion_id"] == checkpoint.parent_id
    assert gate["steps"] == checkpoint.metrics["heldout"]["steps"]
    # As many draws as the deployment asks for (STEPMARK_GATE_RESAMPLES; tests/conftest.py's).
    assert gate["resamples"] == settings.STEPMARK_GATE_RESAMPLES == TEST_GATE_RESAMPLES


def test_a_retrain_on_too_few_held_out_problems_keeps_the_champion(project):
    first = run_one(project)
    rate_everything(project)
    project.promotion_min_problems = 50  # the default: more than this project holds out
    project.save()
    checkpoint = retrain_if_due(project.pk)
    problems = checkpoint.metrics["heldout_problems"]
    assert checkpoint.status == Checkpoint.REJECTED and 0 < problems < 50
    assert checkpoint.reason.startswith(f"Not enough held-out data to judge: {problems} held-out problems")
    assert champion(project) == first.checkpoint
    gate = checkpoint.metrics["gate"]
    assert (gate["decision"], gate["problems"], gate["min_problems"]) == ("reject", problems, 50)
    assert gate["challenger"] == pytest.approx(checkpoint.metrics["heldout"]["log_loss"])
    assert gate["champion"] == pytest.approx(checkpoint.metrics["champion_heldout"]["log_loss"])


def test_bad_train_settings_fail_with_the_reason(project):
    run_one(project)
    rate_everything(project)
    project.train_settings = {"epochz": 3}
    project.save()
    checkpoint = retrain_if_due(project.pk, force=True)
    assert checkpoint.status == Checkpoint.FAILED and "epochz" in checkpoint.reason


def test_a_task_that_fails_records_the_error_on_its_run(project):
    from scoring import tasks

    project.base_model_path = str(Path(project.base_model_path).parent / "missing-model")
    project.save()
    run = runs.start_generation(project)
    result = tasks.run_generation.apply(args=[run.pk])
    assert result.failed()
    run.refresh_from_db()
    assert run.state == GenerationRun.FAILED and "missing-model" in run.error


def test_ratings_are_untouched_by_retraining(project):
    run_one(project)
    rate_everything(project)
    before = list(Rating.objects.order_by("pk").values_list("pk", "value"))
    retrain_if_due(project.pk, force=True)
    assert list(Rating.objects.order_by("pk").values_list("pk", "value")) == before


def test_a_run_is_scoring_while_it_scores_then_selecting(project, monkeypatch):
    seen = []
    score_pool, select = jobs.score_pool, jobs.select

    def spy_score(run, prm, **kwargs):
        seen.append(("score", GenerationRun.objects.get(pk=run.pk).state))
        return score_pool(run, prm, **kwargs)

    def spy_select(run):
        row = GenerationRun.objects.get(pk=run.pk)
        seen.append(("select", row.state, row.scored_at_start, row.scoring_started_at is not None, row.scored, row.total))
        return select(run)

    monkeypatch.setattr(jobs, "score_pool", spy_score)
    monkeypatch.setattr(jobs, "select", spy_select)
    run = run_one(project, batch_size=16)
    assert seen == [("score", "scoring"), ("select", "selecting", 0, True, run.total, run.total)]
    assert run.state == "done" and run.total == 48


def test_a_resumed_pass_counts_its_rate_from_what_it_scores_itself(project):
    run = run_one(project, pool_limit=20)  # 20 scored by this checkpoint
    again = GenerationRun.objects.create(project=project, checkpoint=run.checkpoint, size=4)
    jobs.run_generation(again.pk, pool_limit=30)
    again.refresh_from_db()
    # The pool shrank by what the first run selected; what it scored before is not this pass's work.
    assert again.scored_at_start > 0 and again.scored == again.total


def test_a_retrain_writes_its_phases_and_keeps_its_report_beside_the_champions(project, monkeypatch):
    first = run_one(project)
    rate_everything(project)
    writes = []
    write = RetrainProgress._write

    def spy(self):
        write(self)
        writes.append(dict(self.state))

    monkeypatch.setattr(RetrainProgress, "_write", spy)
    checkpoint = retrain_if_due(project.pk, force=True)
    phases = [w["phase"] for w in writes]
    assert phases[0] == "exporting" and phases[-2:] == ["evaluating", "saving"]
    training = [w for w in writes if w["phase"] == "training"]
    last = training[-1]
    assert last["step"] == last["total_steps"] == checkpoint.metrics["train"]["steps"] > 0
    assert isinstance(last["loss"], float) and last["eta_s"] == 0
    assert checkpoint.progress["phase"] == "saving"

    report = checkpoint.report
    assert report["champion_id"] == first.checkpoint_id and report["metric"] == "log_loss"
    assert report["heldout_problems"] == checkpoint.metrics["heldout_problems"] > 0
    for side, figures in (("challenger", "heldout"), ("champion", "champion_heldout")):
        steps = report[side]["steps"]
        assert steps["auroc"] == checkpoint.metrics[figures]["step_auroc"]
        assert steps["roc"][0] == [0.0, 0.0] and steps["roc"][-1] == [1.0, 1.0]
        assert sum(b["count"] for b in steps["calibration"]["bins"]) == steps["steps"] == checkpoint.metrics[figures]["steps"]
        best = report[side]["best-of-n"]  # the held-out problems' four graded GSM8K solutions each
        assert best["ns"] == [1, 2, 4] and best["largest_pool"] == 4
        assert best["candidates"] == 4 * best["problems"][0]
    assert report["challenger"]["best-of-n"]["solved"]["majority_vote"] == report["champion"]["best-of-n"]["solved"]["majority_vote"]


@pytest.mark.parametrize("start_from", ["base", "champion"])
def test_a_retrain_fine_tunes_the_champion_or_starts_from_the_base_and_its_lineage_says_which(project, start_from):
    from scoring.prm.checkpoint import read_meta

    first = run_one(project)
    rate_everything(project)
    project.train_settings = {**project.train_settings, "start_from": start_from}
    project.save()
    checkpoint = retrain_if_due(project.pk, force=True)
    assert checkpoint.status in (Checkpoint.CHAMPION, Checkpoint.REJECTED), checkpoint.reason
    assert checkpoint.parent == first.checkpoint
    init = first.checkpoint_id if start_from == "champion" else None
    assert checkpoint.metrics["start_from"] == start_from and checkpoint.metrics["init_checkpoint_id"] == init
    assert checkpoint.metrics["config"]["start_from"] == start_from
    lineage = read_meta(checkpoint.path)["lineage"]
    assert lineage["start_from"] == start_from and lineage["parent_id"] == first.checkpoint_id
    assert lineage["init_checkpoint"] == (first.checkpoint.path if start_from == "champion" else None)
    assert not Path(checkpoint.path + ".trainer").exists()  # the Trainer's own checkpoints go once the run is whole


def test_a_retrain_fine_tunes_a_registered_champion_in_its_own_layout(project, tmp_path):
    """A TRL token classifier registered as the champion (read at "\\n"): start_from "champion"
    fine-tunes it in its layout, with its options, and the worker loads the result as that layout."""
    from scoring import registry
    from scoring.prm.checkpoint import read_meta
    from scoring.registration import validate_registration
    from tests.scoring.prm.factories import build_token_classification

    path = tmp_path / "trl-prm"
    build_token_classification(path, ["What is 2 + 3?"], step_token=None)
    registered = registry.register(project, path, layout="token-classification", step_separator="\n",
                                   champion=True, enqueue=False)
    assert validate_registration(registered.pk).is_champion
    first = run_one(project)
    assert first.checkpoint_id == registered.pk
    rate_everything(project)
    project.train_settings = {**project.train_settings, "start_from": "champion"}
    project.save()
    checkpoint = retrain_if_due(project.pk, force=True)
    assert checkpoint.status in (Checkpoint.CHAMPION, Checkpoint.REJECTED), checkpoint.reason
    assert checkpoint.parent_id == registered.pk and checkpoint.layout == "stepmark"
    assert checkpoint.metrics["init_layout"] == "token-classification"
    meta = read_meta(checkpoint.path)
    assert meta["layout"] == "token-classification" and meta["layout_options"] == {"step_separator": "\n"}
    assert meta["lineage"]["init_checkpoint"] == str(path) and meta["lineage"]["init_layout"] == "token-classification"
    tuned = worker.get_prm(checkpoint)
    assert type(tuned).__name__ == "TokenClassificationPRM" and tuned.step_token == "\n"
    assert checkpoint.metrics["heldout"]["steps"] > 0  # it scored the held-out problems in its layout
