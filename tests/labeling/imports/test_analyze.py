"""An import ends by analysing the tables it filled (labeling/analyze.py), on PostgreSQL."""
import pytest
from django.db import connection

from labeling.imports import run_import
from labeling.models import Problem, Solution, Step
from tests.factories import analyze_counts, make_project, write_jsonl

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_import_leaves_the_planner_statistics_of_what_it_wrote(tmp_path):
    path = tmp_path / "candidates.jsonl"
    write_jsonl(path, [{"problem": f"What is {n} + {n}?", "ground_truth_answer": str(2 * n),
                        "steps": [f"{n} + {n} = {2 * n}.", f"# Answer\n\n{2 * n}"], "is_correct": True}
                       for n in range(40)])
    before = analyze_counts(Problem, Solution, Step)
    run_import("candidates", path, make_project())
    after = analyze_counts(Problem, Solution, Step)
    assert after == {model: count + 1 for model, count in before.items()}  # ANALYZE ran once on each
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [Solution._meta.db_table])
        assert cursor.fetchone()[0] >= 40  # the planner knows the rows are there
