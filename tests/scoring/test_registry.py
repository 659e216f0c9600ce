"""Registering a PRM from a directory (API, command), its validation, and using it as the champion.

The directories are tiny random models in each exact layout (tests/scoring/prm/factories.py).
The API's tasks go to the real Redis broker, where ``queued`` reads them back; validation and
evaluation run here by calling the worker's functions (the e2e test runs them in a real worker).
"""
import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from labeling.imports import run_import
from labeling.models import Solution
from scoring import jobs, runs
from scoring.champions import champion, ensure_champion
from scoring.models import Checkpoint, SolutionScore
from scoring.prm.layouts import LAYOUTS
from scoring.registration import evaluate_against_champion, validate_registration
from tests.factories import client_for, make_project, make_user
from tests.scoring.prm.factories import build_math_shepherd, build_qwen_prm, build_stepmark, build_token_classification
from tests.scoring.test_api import broker, queued  # noqa: F401 (the broker fixture)
from tests.scoring.test_jobs import checkpoint_dir, gsm8k_slice, rate_everything  # noqa: F401 (fixtures)

TEXTS = ["Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May.",
         "How many clips did Natalia sell altogether in April and May?", "The answer is 72."]


@pytest.fixture(scope="module")
def layouts(tmp_path_factory, tiny_bases):
    """``{layout: directory}``, one tiny model in each exact layout, plus broken ones."""
    root = tmp_path_factory.mktemp("registry")
    built = {"qwen-prm": root / "qwen", "token-classification": root / "trl", "math-shepherd": root / "shepherd",
             "stepmark": root / "stepmark", "no-head": root / "no_head", "no-extra0": root / "no_extra0"}
    build_qwen_prm(built["qwen-prm"], TEXTS)
    build_token_classification(built["token-classification"], TEXTS, step_token=None)
    build_math_shepherd(built["math-shepherd"], TEXTS)
    build_stepmark(built["stepmark"], tiny_bases["bert"])
    build_qwen_prm(built["no-head"], TEXTS, head=False)
    build_token_classification(built["no-extra0"], TEXTS, step_token=None)
    return built


@pytest.fixture
def researcher(db):
    return client_for(make_user("res", "researcher"))


@pytest.fixture
def project(db, researcher):
    return make_project(name="registry", generation_size=5)


def register(client, project, **body):
    return client.post(reverse("scoring:project-checkpoints", args=[project.pk]), body, format="json")


def test_the_models_layout_choices_are_the_cores():
    assert [name for name, _ in Checkpoint.LAYOUT_CHOICES] == list(LAYOUTS)


def test_every_layout_registers_through_the_api_and_a_worker_validates_it(researcher, project, layouts, broker):
    for layout in LAYOUTS:
        answer = register(researcher, project, path=str(layouts[layout]))
        assert answer.status_code == 202, answer.content
        body = answer.json()
        assert body["status"] == "validating" and body["layout"] == layout and body["path"] == str(layouts[layout])
        assert queued(broker)[-1] == ("scoring.tasks.validate_checkpoint", body["task_id"], [body["id"]], {})
        checkpoint = validate_registration(body["id"])  # what the worker runs
        assert checkpoint.status == Checkpoint.REGISTERED, checkpoint.reason
        validation = checkpoint.metrics["validation"]
        assert validation["layout"] == layout and len(validation["smoke_scores"]) == 2
        assert all(0 < p < 1 for p in validation["smoke_scores"])
        assert "smoke example scored" in checkpoint.reason and not checkpoint.is_champion
    listed = {c["layout"]: c for c in researcher.get(reverse("scoring:project-checkpoints", args=[project.pk])).json()}
    assert set(listed) == set(LAYOUTS) and {c["status"] for c in listed.values()} == {"registered"}
    assert listed["token-classification"]["metrics"]["validation"]["step_token"] == "\n"
    assert listed["qwen-prm"]["metrics"]["validation"]["step_token"] == "<extra_0>"
    # a layout named, with its option: TRL's separator given explicitly
    named = register(researcher, project, path=str(layouts["token-classification"]), layout="token-classification",
                     step_separator="\n").json()
    assert named["layout_options"] == {"step_separator": "\n"}
    assert validate_registration(named["id"]).status == Checkpoint.REGISTERED


def test_a_bad_directory_is_refused_naming_what_is_missing(researcher, project, layouts, tmp_path, broker):
    def refused(**body):
        answer = register(researcher, project, **body)
        assert answer.status_code == 400, answer.content
        return answer.json()

    assert refused(path=str(tmp_path / "nowhere")) == {"detail": f"No directory {tmp_path / 'nowhere'} on the server.",
                                                        "field": "path"}
    assert "no config.json" in refused(path=str(tmp_path))["detail"]
    assert "not a Hugging Face" in refused(path=str(tmp_path))["detail"]
    missing = refused(path=str(layouts["no-head"]), layout="qwen-prm")
    assert missing["field"] == "path" and "no score.0.weight, score.0.bias, score.2.weight, score.2.bias tensors" in missing["detail"]
    assert "cannot tell its layout" in refused(path=str(layouts["no-head"]))["detail"]  # a bare Qwen2Model
    assert "no *ForCausalLM architecture" in refused(path=str(layouts["qwen-prm"]), layout="math-shepherd")["detail"]
    assert refused(path=str(layouts["qwen-prm"]), step_separator="\n")["field"] == "step_separator"
    assert "layout" in refused(path=str(layouts["qwen-prm"]), layout="pytorch-pickle")
    assert "absolute path" in refused(path="models/qwen")["detail"]
    assert not Checkpoint.objects.filter(project=project).exists() and queued(broker) == []


def test_only_the_projects_researchers_may_register(project, layouts, broker):
    body = {"path": str(layouts["qwen-prm"])}
    assert register(client_for(make_user("ann", "annotator")), project, **body).status_code == 403
    other = make_project(name="elsewhere")
    assert register(client_for(make_user("res2", "researcher", projects=[other])), project, **body).status_code == 404
    assert not Checkpoint.objects.exists() and queued(broker) == []


def test_a_load_error_found_by_the_worker_is_stored_and_shown(researcher, project, layouts, broker):
    # The files pass (a token classifier), but its tokenizer has no <extra_0>: only loading it tells.
    body = register(researcher, project, path=str(layouts["no-extra0"]), layout="qwen-prm").json()
    checkpoint = validate_registration(body["id"])
    assert checkpoint.status == Checkpoint.INVALID
    assert "no single token for the step separator '<extra_0>'" in checkpoint.reason
    shown = researcher.get(reverse("scoring:project-checkpoints", args=[project.pk])).json()[0]
    assert shown["status"] == "invalid" and "<extra_0>" in shown["reason"]
    refused = researcher.post(reverse("scoring:checkpoint-champion", args=[body["id"]]))
    assert refused.status_code == 409 and "invalid" in refused.json()["detail"]
    assert researcher.post(reverse("scoring:checkpoint-evaluate", args=[body["id"]])).status_code == 409
    assert validate_registration(body["id"]).status == Checkpoint.INVALID  # a redelivery changes nothing


def test_a_project_starts_from_a_registered_prm_and_the_champion_can_be_changed(researcher, project, layouts, broker):
    first = register(researcher, project, path=str(layouts["math-shepherd"])).json()
    validate_registration(first["id"])
    started = ensure_champion(project)  # the first generation's champion: the registered PRM, no untrained head
    assert started.pk == first["id"] and started.is_champion and started.layout == "math-shepherd"
    assert "Initial PRM: the registered math-shepherd checkpoint" in started.reason
    second = register(researcher, project, path=str(layouts["qwen-prm"]), champion=True).json()
    made = validate_registration(second["id"])  # asked to be the champion once valid
    assert made.is_champion and champion(project).pk == second["id"]
    # by hand, back to the first: the replaced one keeps its row, no longer current
    back = researcher.post(reverse("scoring:checkpoint-champion", args=[first["id"]]))
    assert back.status_code == 200 and back.json()["is_champion"] and back.json()["status"] == "champion"
    assert Checkpoint.objects.filter(project=project, is_champion=True).get().pk == first["id"]
    assert Checkpoint.objects.get(pk=second["id"]).status == "champion"  # "former champion" on the page
    assert researcher.post(reverse("scoring:checkpoint-evaluate", args=[first["id"]])).status_code == 409  # the champion
    queued_evaluation = researcher.post(reverse("scoring:checkpoint-evaluate", args=[second["id"]]))
    assert queued_evaluation.status_code == 202
    assert queued(broker)[-1] == ("scoring.tasks.evaluate_checkpoint", queued_evaluation.json()["task_id"],
                                  [second["id"]], {})
    # before anything is rated there is nothing to judge on: a registered PRM stays registered, saying so
    third = register(researcher, project, path=str(layouts["stepmark"])).json()
    validate_registration(third["id"])
    unjudged = evaluate_against_champion(third["id"])
    assert unjudged.status == "registered" and "no held-out problem" in unjudged.reason


def test_the_command_registers_and_refuses_a_bad_directory(project, layouts, broker, tmp_path):
    out = io.StringIO()
    call_command("register_prm", str(layouts["token-classification"]), "--project", project.name, stdout=out)
    checkpoint = Checkpoint.objects.get(project=project)
    assert checkpoint.layout == "token-classification" and checkpoint.status == "validating"
    assert f"Checkpoint {checkpoint.pk}: token-classification layout, validation queued" in out.getvalue()
    assert queued(broker)[-1][0] == "scoring.tasks.validate_checkpoint"
    with pytest.raises(CommandError, match="no score.0.weight, score.0.bias, score.2.weight, score.2.bias tensors"):
        call_command("register_prm", str(layouts["no-head"]), "--project", project.name, "--layout", "qwen-prm")
    with pytest.raises(CommandError, match="No directory"):
        call_command("register_prm", str(tmp_path / "nowhere"), "--project", project.name)
    with pytest.raises(CommandError, match="no project named"):
        call_command("register_prm", str(layouts["qwen-prm"]), "--project", "nobody")
    out = io.StringIO()
    call_command("register_prm", str(layouts["qwen-prm"]), "--project", project.name, "--here", "--champion", stdout=out)
    assert "Registered: qwen-prm layout, step token '<extra_0>'" in out.getvalue() and "It is the champion." in out.getvalue()
    assert champion(project).layout == "qwen-prm"
    with pytest.raises(CommandError, match="no single token for the step separator '<extra_0>'"):
        call_command("register_prm", str(layouts["no-extra0"]), "--project", project.name, "--here", "--layout", "qwen-prm")
    assert Checkpoint.objects.filter(project=project, status="invalid").count() == 1
    out = io.StringIO()
    call_command("register_prm", str(layouts["token-classification"]), "--project", project.name, "--layout",
                 "token-classification", "--step-separator", "\\n", "--here", stdout=out)  # typed as \n
    typed = Checkpoint.objects.filter(project=project).latest("pk")
    assert typed.layout_options == {"step_separator": "\n"} and typed.status == "registered", typed.reason


def test_a_registered_qwen_prm_scores_a_generation_and_is_evaluated_like_any_other(
        db, layouts, gsm8k_slice, checkpoint_dir, broker):
    """Generation scoring, evaluation and promotion through the one scorer: a qwen-prm champion scores
    the pool (its chat template applied), then a math-shepherd challenger is judged against it."""
    from scoring.prm.adapters import load_adapter
    from scoring.prm.scorer import score_solutions

    project = make_project(name="registered loop", overlap=2, generation_size=8, selection_wrong_share=0.75,
                           retrain_metric="log_loss")
    run_import("gsm8k-examples", gsm8k_slice, project)
    qwen = Checkpoint.objects.get(pk=register(client_for(make_user("r", "researcher", projects=[project])), project,
                                              path=str(layouts["qwen-prm"]), champion=True).json()["id"])
    assert validate_registration(qwen.pk).is_champion
    run = jobs.run_generation(runs.start_generation(project).pk, batch_size=10)
    assert run.state == "done" and run.checkpoint_id == qwen.pk and run.selected == 8
    assert SolutionScore.objects.filter(checkpoint=qwen).count() == run.total == 48
    # the stored scores are the adapter's own, with the Qwen chat template around the problem
    adapted = load_adapter("qwen-prm", layouts["qwen-prm"], device="cpu")
    some = list(Solution.objects.filter(project=project).order_by("pk").values_list("pk", flat=True)[:5])
    texts = jobs.solution_texts(some)
    expected = score_solutions(adapted, [texts[pk] for pk in some])
    stored = dict(SolutionScore.objects.filter(checkpoint=qwen, solution__in=some).values_list("solution_id", "step_scores"))
    for pk, result in zip(some, expected):
        assert stored[pk] == pytest.approx(result.step_scores, abs=1e-6)
    plain = score_solutions(_without_template(adapted), [texts[some[0]]])[0].step_scores
    assert plain != pytest.approx(stored[some[0]], abs=1e-6)  # the template mattered
    # a challenger in another layout, judged on the held-out problems as a retrain's checkpoint is
    rate_everything(project)
    shepherd = register(client_for(make_user("r2", "researcher", projects=[project])), project,
                        path=str(layouts["math-shepherd"])).json()
    validate_registration(shepherd["id"])
    judged = evaluate_against_champion(shepherd["id"])
    assert judged.status in ("champion", "rejected") and judged.reason
    assert judged.metrics["heldout"]["steps"] == judged.metrics["champion_heldout"]["steps"] > 0
    assert judged.metrics["champion_id"] == qwen.pk and judged.report["challenger"]["steps"]["roc"]
    # the retrain's gate: a dozen problems hold out too few to judge at the default minimum (50)
    gate = judged.metrics["gate"]
    assert gate["problems"] == judged.metrics["heldout_problems"] < 50 and gate["decision"] == "reject"
    assert judged.status == "rejected" and judged.reason.startswith("Not enough held-out data to judge")
    assert champion(project) == qwen
    assert json.dumps(judged.report)  # stored as the research page reads it


def _without_template(adapted):
    """The same Qwen PRM reading the problem bare (no chat template): to show the template is applied."""
    adapted.prepare = lambda problem, steps: (problem, steps)
    return adapted


def test_the_next_retrain_counts_from_a_registered_champions_registration(researcher, project, layouts, broker):
    from labeling.models import Assignment
    from scoring import retrain
    from tests.factories import make_annotator, make_solution

    def submitted_passes(n):
        for _ in range(n):
            Assignment.objects.create(project=project, solution=make_solution(project), annotator=make_annotator(),
                                      state=Assignment.SUBMITTED, finish_reason="solution")

    project.retrain_threshold = 2
    project.save()
    submitted_passes(3)
    assert retrain.retrain_due(project)  # nothing trained yet: three passes are due
    registered = register(researcher, project, path=str(layouts["math-shepherd"]), champion=True).json()
    assert validate_registration(registered["id"]).is_champion
    assert not retrain.retrain_due(project)  # the champion came with the passes so far
    submitted_passes(2)
    assert retrain.retrain_due(project)
