"""Labels by source (labeling/quality/sources.py), agreement between sources (labeling/stats/sources.py),
the TRL exports filtered by agreement and their API (labeling/api/source_agreement.py, ?agree=)."""
import io
import json

import pyarrow.parquet
import pytest
from django.urls import reverse

from labeling.errors import DomainError
from labeling.exports import ExportFilters, get_exporter, stream_export
from labeling.models import LabelSource
from labeling.quality import sources
from labeling.stats import sources as source_stats
from tests.factories import client_for, machine_labels, make_annotator, make_project, make_solution, make_user, rated_pass

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    """Two solutions rated by two people (agreeing), a judge and rollouts with their own views."""
    project = make_project(name="sources")
    bea, cal = make_annotator("bea"), make_annotator("cal")
    first = make_solution(project, steps=["a", "b", "c", "d"], generation=1, problem="P1")
    second = make_solution(project, steps=["e", "f"], generation=2, problem="P2")
    for person in (bea, cal):
        rated_pass(first, person, [1, 1, 0, -1])
        rated_pass(second, person, [1, -1])
    # The judge agrees on a, b, c (0 and +1 both train as true) and calls d right; rollouts agree on b only.
    machine_labels(first, [1, 1, 1, 1], kind=LabelSource.JUDGE, name="judge gpt-x v1")
    machine_labels(second, [1, -1], kind=LabelSource.JUDGE, name="judge gpt-x v1")
    machine_labels(first, [-1, 1, None, -1], kind=LabelSource.ROLLOUTS, name="rollouts 8",
                   scores={0: 0.0, 1: 0.5, 3: 0.0})
    return project, first, second


def resolved(project, *selectors):
    return sources.resolve_sources(project, list(selectors))


def test_people_are_their_consensus_and_machines_their_usable_values(world):
    project, first, second = world
    people, rollouts = resolved(project, "people", "rollouts")
    steps = {s.position: s.pk for s in first.steps.all()}
    got = sources.labels(project, people)
    assert got[steps[2]] == (0, True) and got[steps[3]] == (-1, False)
    assert sources.labels(project, people, neutral="negative")[steps[2]] == (0, False)
    machine = sources.labels(project, rollouts)
    assert machine == {steps[0]: (-1, False), steps[1]: (1, True), steps[3]: (-1, False)}  # unparseable left out
    only_two = sources.labels(project, people, generation=2)
    assert set(only_two) == {s.pk for s in second.steps.all()}


def test_a_selector_names_people_a_kind_or_one_source_and_a_bad_one_is_named(world):
    project, *_ = world
    judge = LabelSource.objects.get(project=project, kind="judge")
    assert [s.name for s in resolved(project, "judge", f"source:{judge.pk}", "people")] == [
        "judge gpt-x v1", "judge gpt-x v1", "people (consensus)"]
    for bad, message in [("prm", "no prm labels"), ("source:999999", "no label source"), ("gpt", "unknown source")]:
        with pytest.raises(DomainError, match=message) as caught:
            resolved(project, bad)
        assert caught.value.field == "sources"
    with pytest.raises(DomainError, match="once"):
        resolved(project, "people", "people")
    other = make_project(name="elsewhere")
    with pytest.raises(DomainError, match="no label source"):
        resolved(other, f"source:{judge.pk}")  # another project's source is not this project's


def test_agreeing_steps_make_trajectories_by_the_pass_rule(world):
    project, first, second = world
    rows = [json.loads(line) for line in get_exporter("trl")(ExportFilters(project_id=project.pk,
                                                                           agree=("people", "judge")))]
    by_prompt = {r["prompt"]: r for r in rows}
    # First: a, b, c agree (c: 0 and +1 both true), d differs: the trajectory stops before d.
    assert by_prompt["P1"]["completions"] == ["a", "b", "c"] and by_prompt["P1"]["labels"] == [True, True, True]
    # Second: both say e right, f wrong: it ends after the first false label.
    assert by_prompt["P2"]["completions"] == ["e", "f"] and by_prompt["P2"]["labels"] == [True, False]
    assert all(r["label_sources"] == ["people (consensus)", "judge gpt-x v1"] for r in rows)
    # People and rollouts disagree on the first step: no step to train on, no row.
    assert list(get_exporter("trl")(ExportFilters(project_id=project.pk, agree=("people", "rollouts")))) == []
    # Judge and rollouts (Qwen's pair) on generation 1 only; 0 as false drops nothing here.
    negative = [json.loads(line) for line in get_exporter("trl_neutral_negative")(
        ExportFilters(project_id=project.pk, agree=("people", "judge"), generations=(2,)))]
    assert [r["prompt"] for r in negative] == ["P2"]


def test_the_parquet_export_by_agreement_records_its_filter_and_datasets_reads_it(world, tmp_path):
    project, *_ = world
    filters = ExportFilters(project_id=project.pk, agree=("people", "judge"))
    path = tmp_path / "agreed.parquet"
    path.write_bytes(b"".join(stream_export("trl-parquet", filters)))
    table = pyarrow.parquet.read_table(path)
    meta = json.loads(table.schema.metadata[b"stepmark"])
    assert meta == {"filter": "agree", "sources": ["people", "judge"], "neutral": "positive"}
    expected = [json.loads(line) for line in get_exporter("trl")(filters)]
    assert table.to_pylist() == expected
    datasets = pytest.importorskip("datasets")
    loaded = datasets.load_dataset("parquet", data_files=str(path), split="train")
    assert loaded["completions"] == [r["completions"] for r in expected]


def test_the_prm800k_export_never_carries_machine_labels(world):
    project, *_ = world
    before = b"".join(stream_export("prm800k", ExportFilters(project_id=project.pk)))
    LabelSource.objects.filter(project=project).delete()
    assert b"".join(stream_export("prm800k", ExportFilters(project_id=project.pk))) == before


def test_pairwise_agreement_has_shares_kappas_and_reasons(world):
    project, *_ = world
    result = source_stats.pairwise(project, replicates=50)
    assert [s["kind"] for s in result["sources"]] == ["people", "rollouts", "judge"]
    pairs = {(p["a"]["kind"], p["b"]["kind"]): p for p in result["pairs"]}
    people_judge = pairs[("people", "judge")]
    assert people_judge["shared"] == 6 and people_judge["agree"] == pytest.approx(5 / 6)
    assert people_judge["low"] <= people_judge["kappa"] <= people_judge["high"]
    people_rollouts = pairs[("people", "rollouts")]
    assert people_rollouts["shared"] == 3 and people_rollouts["agree"] == pytest.approx(2 / 3)
    empty = source_stats.pairwise(make_project(name="no machines"))
    assert [s["kind"] for s in empty["sources"]] == ["people"] and empty["pairs"] == []


def test_a_pair_with_no_shared_step_says_why(world):
    project, first, second = world
    other = make_solution(project, steps=["x"], problem="P3")
    machine_labels(other, [1], kind=LabelSource.PRM, name="prm ckpt-1")
    pair = next(p for p in source_stats.pairwise(project, replicates=0)["pairs"]
                if {p["a"]["kind"], p["b"]["kind"]} == {"prm", "rollouts"})
    assert pair["shared"] == 0 and pair["agree"] is None and pair["kappa"] is None
    assert "no step was labelled by both" in pair["reason"]


def test_disagreements_list_the_differing_steps_by_solution(world):
    project, first, second = world
    people, judge = resolved(project, "people", "judge")
    found = source_stats.disagreements(project, people, judge)
    assert found == {"count": 1, "rows": [{"solution": first.pk, "position": 3, "alternative": 0, "a": -1, "b": 1}]}
    with pytest.raises(DomainError, match="two different"):
        source_stats.disagreements(project, people, people)


def test_the_api_answers_agreement_disagreements_and_the_filtered_export(world):
    project, first, _ = world
    lead = make_user("lead-src", "lead")
    client = client_for(lead)
    agreement = client.get(reverse("api:project-source-agreement", args=[project.pk]), {"generation": 1})
    assert agreement.status_code == 200
    assert {(p["a"]["kind"], p["b"]["kind"]): p["shared"] for p in agreement.json()["pairs"]}[("people", "judge")] == 4
    listed = client.get(reverse("api:project-source-disagreements", args=[project.pk]), {"a": "people", "b": "judge"})
    assert listed.status_code == 200 and listed.json()["rows"][0]["solution"] == first.pk
    bad = client.get(reverse("api:project-source-disagreements", args=[project.pk]), {"a": "people", "b": "prm"})
    assert bad.status_code == 400 and "b" in json.dumps(bad.json())
    url = reverse("api:project-export", args=[project.pk])
    export = client.get(url, {"format": "trl", "agree": "people,judge"})
    assert export.status_code == 200
    rows = [json.loads(line) for line in b"".join(export.streaming_content).decode().splitlines()]
    assert sorted(r["prompt"] for r in rows) == ["P1", "P2"]
    for query, field in [({"format": "trl", "agree": "people"}, "agree"),
                         ({"format": "prm800k", "agree": "people,judge"}, "agree"),
                         ({"format": "trl", "agree": "people,prm"}, "agree"),
                         ({"format": "trl", "agree": "people,judge", "provenance": "1"}, "provenance")]:
        refused = client.get(url, query)
        assert refused.status_code == 400, query
        assert field in json.dumps(refused.json()), (query, refused.json())
    parquet = client.get(url, {"format": "trl-parquet", "agree": "judge,people"})
    table = pyarrow.parquet.read_table(io.BytesIO(b"".join(parquet.streaming_content)))
    assert json.loads(table.schema.metadata[b"stepmark"])["sources"] == ["judge", "people"]


def test_the_command_writes_the_agreed_rows_and_names_a_bad_source(world, tmp_path):
    from django.core.management import CommandError, call_command

    project, *_ = world
    out = tmp_path / "agreed.jsonl"
    call_command("export_trl", project=project.name, output=out, agree=("people", "judge"), quiet=True)
    expected = [json.loads(line) for line in get_exporter("trl")(ExportFilters(project_id=project.pk,
                                                                               agree=("people", "judge")))]
    assert [json.loads(line) for line in out.read_text().splitlines()] == expected and len(expected) == 2
    with pytest.raises(CommandError, match="--agree: the project has no prm labels"):
        call_command("export_trl", project=project.name, output=tmp_path / "x.jsonl", agree=("people", "prm"))


def test_the_step_labels_export_carries_every_machine_label_with_its_source(world):
    project, first, second = world
    url = reverse("api:project-export", args=[project.pk])
    client = client_for(make_user("res-src", "researcher"))
    answer = client.get(url, {"format": "step-labels"})
    assert answer.status_code == 200 and answer["Content-Disposition"].endswith('.jsonl"')
    rows = [json.loads(line) for line in b"".join(answer.streaming_content).decode().splitlines()]
    assert len(rows) == 4 + 2 + 4  # the judge's six, the rollouts' four (one unparseable, without a value)
    rollout = next(r for r in rows if r["source"]["kind"] == "rollouts" and r["position"] == 1)
    assert (rollout["solution"], rollout["step"], rollout["value"], rollout["score"]) == (first.pk, "b", 1, 0.5)
    assert rollout["source"]["name"] == "rollouts 8" and rollout["problem"] == "P1"
    unparseable = next(r for r in rows if r["source"]["kind"] == "rollouts" and r["position"] == 2)
    assert unparseable["value"] is None and unparseable["status"] == "unparseable"
    only_two = client.get(url, {"format": "step-labels", "generation": "2"})
    assert {json.loads(line)["solution"] for line in b"".join(only_two.streaming_content).decode().splitlines()} == {
        second.pk}
    assert client.get(url, {"format": "step-labels", "exclude_paused": "1"}).status_code == 400
