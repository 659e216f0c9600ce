"""The replay simulator as a researcher's job: the API that starts and reads it, and the task on a
tiny project's own labels (``scoring.simulations``)."""
import pytest
from django.urls import reverse

from scoring import simulations
from scoring.models import SimulationRun
from scoring.runs import JobConflict
from tests.factories import client_for, make_project, make_user
from tests.scoring.test_api import broker, queued  # noqa: F401 (the broker fixture)
from tests.scoring.test_jobs import (  # noqa: F401 (fixtures)
    checkpoint_dir,
    gsm8k_slice,
    project as loop_project,
    rate_everything,
    run_one,
)


@pytest.fixture
def project(db):
    return make_project(name="simulated")


def url(project):
    return reverse("scoring:project-simulations", args=[project.pk])


def test_start_queues_one_run_and_refuses_a_second_while_it_is_open(project, broker):  # noqa: F811
    client = client_for(make_user("res", "researcher"))
    answer = client.post(url(project), {"strategies": ["random", "uncertainty"], "rounds": 3, "per_round": 5,
                                        "seed": 7}, format="json")
    assert answer.status_code == 202, answer.json()
    body = answer.json()
    assert body["state"] == "queued" and body["result"] is None and body["task_id"]
    run = SimulationRun.objects.get(pk=body["id"])
    assert run.project == project and run.task_id == body["task_id"]
    assert run.config == {"strategies": ["random", "uncertainty"], "rounds": 3, "per_round": 5, "seed_size": None,
                          "seed": 7, "heldout_fraction": 0.2}
    assert queued(broker) == [("scoring.tasks.simulate_selection", run.task_id, [run.pk], {})]
    again = client.post(url(project), {}, format="json")
    assert again.status_code == 409 and again.json()["run"]["id"] == run.pk
    assert len(queued(broker)) == 1
    SimulationRun.objects.filter(pk=run.pk).update(state=SimulationRun.RUNNING)
    assert client.post(url(project), {}, format="json").status_code == 409
    SimulationRun.objects.filter(pk=run.pk).update(state=SimulationRun.DONE)
    assert client.post(url(project), {}, format="json").status_code == 202  # done: the next may start
    listed = client.get(url(project)).json()
    assert listed["count"] == 2 and listed["results"][1]["id"] == run.pk  # newest first, paged
    detail = client.get(reverse("scoring:simulation-detail", args=[run.pk])).json()
    assert detail["settings"]["per_round"] == 5 and detail["state"] == "done"


@pytest.mark.parametrize("asked, field", [
    ({"rounds": 11}, "rounds"), ({"rounds": 0}, "rounds"), ({"per_round": 1001}, "per_round"),
    ({"strategies": ["random", "random"]}, "strategies"), ({"strategies": ["mixture"]}, "strategies"),
    ({"strategies": []}, "strategies"), ({"seed": -1}, "seed"), ({"seed_size": 0}, "seed_size"),
    ({"heldout_fraction": 0.9}, "heldout_fraction"),
])
def test_bad_settings_are_refused_naming_the_field(project, broker, asked, field):  # noqa: F811
    client = client_for(make_user("res", "researcher"))
    answer = client.post(url(project), asked, format="json")
    assert answer.status_code == 400
    assert field in answer.json(), answer.json()
    assert not SimulationRun.objects.exists() and queued(broker) == []


def test_only_the_projects_researchers_start_or_read(project, broker):  # noqa: F811
    run = SimulationRun.objects.create(project=project, state=SimulationRun.DONE)
    elsewhere = make_project(name="elsewhere")
    outsider = client_for(make_user("other", "researcher", projects=[elsewhere]))  # a researcher, not of this project
    assert outsider.post(url(project), {}, format="json").status_code == 404
    assert outsider.get(url(project)).status_code == 404
    assert outsider.get(reverse("scoring:simulation-detail", args=[run.pk])).status_code == 404
    annotator = client_for(make_user("ann", "annotator"))
    assert annotator.post(url(project), {}, format="json").status_code == 403
    assert annotator.get(reverse("scoring:simulation-detail", args=[run.pk])).status_code == 403
    assert SimulationRun.objects.count() == 1 and queued(broker) == []


def test_start_simulation_refuses_while_one_is_open(project):
    first = simulations.start_simulation(project, {})
    with pytest.raises(JobConflict):
        simulations.start_simulation(project, {})
    assert first.config["strategies"] == ["random", "convincing_wrong"]


def test_the_task_replays_the_projects_own_labels_for_every_strategy(loop_project):
    from scoring import tasks

    run_one(loop_project)
    rate_everything(loop_project)
    run = simulations.start_simulation(loop_project, {"strategies": ["random", "convincing_wrong", "uncertainty"],
                                                      "rounds": 2, "per_round": 2, "seed_size": 2,
                                                      "heldout_fraction": 0.25})
    outcome = tasks.simulate_selection.apply(args=[run.pk]).get()
    run.refresh_from_db()
    assert outcome == {"simulation": run.pk, "state": "done"}, run.error
    assert run.state == "done" and run.finished_at and run.error == ""
    report = run.result
    assert set(report["curves"]) == {"random", "convincing_wrong", "uncertainty"}
    for curve in report["curves"].values():
        assert [p["round"] for p in curve] == [0, 1, 2]
        assert [p["solutions"] for p in curve] == [2, 4, 6]
        assert curve[0]["steps"] > 0 and curve[-1]["steps"] > curve[0]["steps"]
    assert report["heldout_problems"] >= 1 and report["pool"] >= 6
    assert report["base"] == loop_project.base_model_path
    assert "random" in report["savings"] or report["curves"]["random"][-1]["auroc"] is None


def test_a_simulation_on_too_few_labels_fails_with_the_reason(loop_project):
    from scoring import tasks

    run = simulations.start_simulation(loop_project, {})
    with pytest.raises(Exception):
        tasks.simulate_selection.apply(args=[run.pk]).get()
    run.refresh_from_db()
    assert run.state == "failed" and run.error and run.finished_at
