"""Imported candidate solutions are identified by their problem and steps only.

Before, ``Solution.content_hash`` of an imported candidate covered the problem hash, the steps,
the final answer and the generator, so the same completions imported once with a model name and
once without one (a vLLM file, the form's model field left empty) were stored twice, and the
next generation could select both copies. ``labeling.imports.hashing.candidate_hash`` now takes
``["candidate", problem hash, steps]``; this migration rehashes the rows stored under the old key.

A row is a candidate import's when its stored hash is the old key recomputed from its row (its
problem's hash, its alternative-0 steps, final answer and generator); other rows (PRM800K's,
made by other rules) are left alone. Rows that now share a key are copies of one solution: one
is kept and takes the new hash (a copy already in use, that is with passes, gold proposals, a
gold, screening or generation mark, first; else one that names its generator; else the oldest;
without a generator it takes a copy's), copies nobody has used are deleted (with their steps
and scores), and a used copy beyond the kept one keeps its old hash (its ratings stay where
they are; a re-import no longer adds more).

Going back restores the old key of every row that has the new one; deleted copies stay deleted.
"""
import hashlib
import json

from django.db import migrations

BATCH = 1000  # solutions per round of queries; a problem's solutions are never split


def sha256_json(value):
    # The canonical JSON of labeling.imports.hashing, copied: a migration keeps the rule it was written with.
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def old_key(problem_hash, steps, final_answer, generator):
    return sha256_json(["candidate", problem_hash, steps, final_answer, generator])


def new_key(problem_hash, steps):
    return sha256_json(["candidate", problem_hash, steps])


def batches(Solution):
    """Lists of solution rows, a problem's rows always in one list."""
    rows = (Solution.objects.filter(has_pre_generated=True).order_by("problem_id", "id")
            .values("id", "project_id", "problem_id", "final_answer", "generator", "content_hash", "num_steps",
                    "is_gold", "is_screening", "generation_id").iterator(chunk_size=BATCH))
    batch = []
    for row in rows:
        if len(batch) >= BATCH and row["problem_id"] != batch[-1]["problem_id"]:
            yield batch
            batch = []
        batch.append(row)
    if batch:
        yield batch


def with_keys(apps, batch):
    """``batch``'s rows with ``old`` and ``new`` keys computed from their problem and steps."""
    Problem, Step = apps.get_model("labeling", "Problem"), apps.get_model("labeling", "Step")
    problem_hashes = dict(Problem.objects.filter(pk__in={r["problem_id"] for r in batch})
                          .values_list("id", "content_hash"))
    steps = {}
    for solution_id, text in (Step.objects.filter(solution_id__in=[r["id"] for r in batch], alternative=0)
                              .order_by("solution_id", "position").values_list("solution_id", "text")):
        steps.setdefault(solution_id, []).append(text)
    for row in batch:
        texts = steps.get(row["id"], [])[:row["num_steps"]]
        problem_hash = problem_hashes[row["problem_id"]]
        row["old"] = old_key(problem_hash, texts, row["final_answer"], row["generator"])
        row["new"] = new_key(problem_hash, texts)
    return batch


def rehash_to_steps_only(apps, schema_editor):
    Solution = apps.get_model("labeling", "Solution")
    Assignment = apps.get_model("labeling", "Assignment")
    GoldProposal = apps.get_model("labeling", "GoldProposal")
    for batch in batches(Solution):
        candidates = [r for r in with_keys(apps, batch) if r["content_hash"] == r["old"]]
        ids = [r["id"] for r in candidates]
        used = set(Assignment.objects.filter(solution_id__in=ids).values_list("solution_id", flat=True))
        used |= set(GoldProposal.objects.filter(solution_id__in=ids).values_list("solution_id", flat=True))
        groups = {}
        for r in candidates:
            r["used"] = r["id"] in used or r["is_gold"] or r["is_screening"] or r["generation_id"] is not None
            groups.setdefault((r["project_id"], r["new"]), []).append(r)
        kept, unused_copies = [], []
        for (_, key), rows in groups.items():
            keep = min(rows, key=lambda r: (not r["used"], not r["generator"], r["id"]))
            # A kept copy without a model name takes the name another copy gave.
            named = next((r["generator"] for r in rows if r["generator"]), "")
            kept.append(Solution(pk=keep["id"], content_hash=key, generator=keep["generator"] or named))
            unused_copies += [r["id"] for r in rows if r is not keep and not r["used"]]
        Solution.objects.bulk_update(kept, ["content_hash", "generator"], batch_size=BATCH)
        if unused_copies:
            Solution.objects.filter(pk__in=unused_copies).delete()  # their steps and scores go with them


def rehash_back(apps, schema_editor):
    Solution = apps.get_model("labeling", "Solution")
    for batch in batches(Solution):
        back = [Solution(pk=r["id"], content_hash=r["old"]) for r in with_keys(apps, batch)
                if r["content_hash"] == r["new"]]
        Solution.objects.bulk_update(back, ["content_hash"], batch_size=BATCH)


class Migration(migrations.Migration):

    dependencies = [
        ("labeling", "0019_gold_only_beside_work"),
        # Deleting an unused copy deletes its scores: the historical models must know that table.
        ("scoring", "0003_progress"),
    ]

    operations = [
        migrations.RunPython(rehash_to_steps_only, rehash_back),
    ]
