"""TRL stepwise supervision as Parquet (labeling/exports/parquet.py): the same rows as the TRL
JSONL export, opened by ``datasets`` and tokenized by TRL's PRM data preparation, through the
command and the export API, with the filters."""
import io
import json

import pyarrow.parquet
import pytest
from django.core.management import call_command
from django.urls import reverse

from labeling.exports import ExportFilters, get_exporter, stream_export, write_export
from labeling.exports import parquet as parquet_export
from labeling.imports import run_import
from labeling.models import Project
from tests.factories import client_for, make_user, write_jsonl, make_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(tmp_path, native, example):
    project = make_project(name="parquet")
    run_import("prm800k", write_jsonl(tmp_path / "in.jsonl", [*native, example]), project)
    return project


def jsonl_rows(project, fmt="trl", **filters):
    return [json.loads(line) for line in get_exporter(fmt)(ExportFilters(project_id=project.id, **filters))]


def test_the_file_holds_the_trl_rows_and_datasets_opens_it(project, tmp_path):
    path = tmp_path / "out" / "trl.parquet"
    count = write_export("trl-parquet", ExportFilters(project_id=project.id), path)
    expected = jsonl_rows(project)
    assert count == len(expected) > 1
    assert pyarrow.parquet.read_table(path).to_pylist() == expected

    datasets = pytest.importorskip("datasets")
    loaded = datasets.load_dataset("parquet", data_files=str(path), split="train")
    assert loaded.features == datasets.Features({
        "prompt": datasets.Value("string"),
        "completions": datasets.List(datasets.Value("string")),
        "labels": datasets.List(datasets.Value("bool")),
    })
    assert loaded.to_list() == expected


def test_row_groups_are_handed_out_as_they_are_written(project, monkeypatch):
    monkeypatch.setattr(parquet_export, "ROW_GROUP", 2)
    pieces = list(get_exporter("trl-parquet")(ExportFilters(project_id=project.id)))
    rows = len(jsonl_rows(project))
    assert [records for _, records in pieces] == [2] * (rows // 2) + [rows % 2]
    data = b"".join(piece for piece, _ in pieces)
    assert pyarrow.parquet.ParquetFile(io.BytesIO(data)).metadata.num_row_groups == (rows + 1) // 2


def test_filters_and_neutral_negative_as_in_the_jsonl_export(project, tmp_path):
    def read(fmt, **filters):
        path = tmp_path / f"{fmt}-{len(filters)}.parquet"
        write_export(fmt, ExportFilters(project_id=project.id, **filters), path)
        return pyarrow.parquet.read_table(path).to_pylist()

    assert read("trl-parquet-neutral-negative") == jsonl_rows(project, "trl_neutral_negative")
    assert read("trl-parquet", generations=(-1,)) == jsonl_rows(project, generations=(-1,))
    # An export that keeps nothing is still a Parquet file with the three columns.
    empty = tmp_path / "empty.parquet"
    assert write_export("trl-parquet", ExportFilters(project_id=project.id, generations=(999,)), empty) == 0
    assert pyarrow.parquet.read_table(empty).column_names == ["prompt", "completions", "labels"]


def test_trl_prm_data_preparation_tokenizes_every_row(project, tmp_path, monkeypatch):
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")  # its PRM trainer lives in trl.experimental
    pytest.importorskip("trl")
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    from trl.experimental.prm import PRMTrainer

    path = tmp_path / "trl.parquet"
    write_export("trl-parquet", ExportFilters(project_id=project.id), path)
    rows = pyarrow.parquet.read_table(path).to_pylist()
    # A tiny word-level tokenizer trained here on the export's own text: nothing is downloaded.
    words = Tokenizer(models.WordLevel(unk_token="<unk>"))
    words.pre_tokenizer = pre_tokenizers.Whitespace()
    texts = [r["prompt"] for r in rows] + [c for r in rows for c in r["completions"]] + ["\n"]
    words.train_from_iterator(texts, trainers.WordLevelTrainer(special_tokens=["<unk>", "<s>", "</s>", "\n"]))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=words, unk_token="<unk>", bos_token="<s>", eos_token="</s>")
    for row in rows:
        tokenized = PRMTrainer.tokenize_row(row, tokenizer, step_separator="\n", max_length=None,
                                            max_completion_length=None, train_on_last_step_only=False, is_eval=False)
        # One label per step, on the step's last token (the separator), in the export's order.
        assert [label for label in tokenized["labels"] if label != -100] == [int(v) for v in row["labels"]]
        assert len(tokenized["input_ids"]) == len(tokenized["labels"])


def test_the_command_and_the_api_give_the_same_file(project, tmp_path):
    path = tmp_path / "cli.parquet"
    call_command("export_trl", "--project", project.name, "--output", str(path), "--parquet", "--quiet")
    from_cli = pyarrow.parquet.read_table(path).to_pylist()
    assert from_cli == jsonl_rows(project)

    client = client_for(make_user("res", "researcher"))
    answer = client.get(reverse("api:project-export", args=[project.pk]), {"format": "trl-parquet"})
    assert answer.status_code == 200
    assert answer["Content-Type"] == "application/vnd.apache.parquet"
    assert answer["Content-Disposition"].endswith('.parquet"')
    body = b"".join(answer.streaming_content)
    assert pyarrow.parquet.read_table(io.BytesIO(body)).to_pylist() == from_cli
    assert b"".join(stream_export("trl-parquet", ExportFilters(project_id=project.id))) == body


def test_provenance_adds_the_labeler_and_generation_to_every_row(project, tmp_path):
    # The same labeler and generation as the PRM800K export's record of each pass, so a training
    # row can be traced back; without the flag the rows keep TRL's three columns only.
    plain = jsonl_rows(project)
    traced = jsonl_rows(project, provenance=True)
    passes = [json.loads(line) for line in get_exporter("prm800k")(ExportFilters(project_id=project.id))]
    assert set(plain[0]) == {"prompt", "completions", "labels"}
    assert [{k: r[k] for k in ("prompt", "completions", "labels")} for r in traced] == plain
    for row in traced:
        assert (row["labeler"], row["generation"]) in {
            (p["labeler"], p["generation"]) for p in passes if p["question"]["problem"] == row["prompt"]}
    # Several labelers, generations given and not (null outside a generation).
    assert len({r["labeler"] for r in traced}) > 1 and {None, 6, 9} <= {r["generation"] for r in traced}

    path = tmp_path / "cli.parquet"
    call_command("export_trl", "--project", project.name, "--output", str(path), "--parquet", "--provenance",
                 "--quiet")
    table = pyarrow.parquet.read_table(path)
    assert table.schema.names == ["prompt", "completions", "labels", "labeler", "generation"]
    assert table.to_pylist() == traced

    client = client_for(make_user("res", "researcher"))
    url = reverse("api:project-export", args=[project.pk])
    answer = client.get(url, {"format": "trl", "provenance": "1"})
    assert answer.status_code == 200
    assert [json.loads(line) for line in b"".join(answer.streaming_content).splitlines()] == traced
    refused = client.get(url, {"format": "prm800k", "provenance": "1"})
    assert refused.status_code == 400 and "provenance" in refused.json()
