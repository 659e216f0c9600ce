"""The loop's PostgreSQL functions are their versioned .sql files (labeling/work/sql/).

A migrated database runs the newest version of each function, and the migrations that create,
replace and restore them execute the files they name.
"""
import importlib
import re

import pytest
from django.db import connection

from labeling.models.content import queue_key
from labeling.work import sql

pytestmark = pytest.mark.django_db

FUNCTIONS = ["stepmark_hand_out", "stepmark_lock_sheet"]


def definition(function):
    """The function's full definition as PostgreSQL prints it, or None when there is none."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_functiondef(oid) FROM pg_proc WHERE proname = %s", [function])
        found = cursor.fetchall()
    assert len(found) <= 1, f"{function} is overloaded"
    return found[0][0] if found else None


def body(version):
    """What PostgreSQL stores as the function's source: the text between the $fn$ quotes."""
    return re.search(r"\$fn\$(.*)\$fn\$", sql.load(version), re.S).group(1)


def signature(version):
    """The statement before the body: name, arguments, result and settings."""
    return sql.load(version).split("$fn$")[0].split("CREATE OR REPLACE")[1]


def source(function):
    with connection.cursor() as cursor:
        cursor.execute("SELECT prosrc FROM pg_proc WHERE proname = %s", [function])
        return cursor.fetchone()[0]


def run(migration, operation):
    """Run a migration's forward or reverse code as ``migrate`` would (rolled back with the test)."""
    module = importlib.import_module(f"labeling.migrations.{migration}")
    with connection.schema_editor() as editor:
        getattr(module, operation)(None, editor)


@pytest.mark.parametrize("function", FUNCTIONS)
def test_the_database_runs_the_newest_version_of_each_function(function):
    newest = sql.newest(function)
    assert source(function) == body(newest)
    # The whole definition (arguments, result, settings) too: executing the file changes nothing.
    migrated = definition(function)
    with connection.cursor() as cursor:
        cursor.execute(sql.load(newest))
    assert definition(function) == migrated


def test_the_newest_versions_are_the_ones_the_code_expects():
    assert sql.newest("stepmark_hand_out") == "stepmark_hand_out.v4"
    assert sql.newest("stepmark_lock_sheet") == "stepmark_lock_sheet.v1"


def test_migrating_back_and_forth_loads_each_version():
    run("0019_gold_only_beside_work", "restore")
    assert source("stepmark_hand_out") == body("stepmark_hand_out.v3")
    run("0012_unspottable_gold", "restore")
    assert source("stepmark_hand_out") == body("stepmark_hand_out.v2")
    assert "p_gold_start" not in definition("stepmark_hand_out")
    run("0011_hand_out_plans", "restore")
    assert source("stepmark_hand_out") == body("stepmark_hand_out.v1")
    assert "force_generic_plan" not in definition("stepmark_hand_out")
    run("0007_hand_out_function", "drop")
    assert definition("stepmark_hand_out") is None
    run("0007_hand_out_function", "create")
    assert source("stepmark_hand_out") == body("stepmark_hand_out.v1")
    run("0011_hand_out_plans", "create")
    assert source("stepmark_hand_out") == body("stepmark_hand_out.v2")
    assert "SET plan_cache_mode TO 'force_generic_plan'" in definition("stepmark_hand_out")
    run("0012_unspottable_gold", "create")
    assert source("stepmark_hand_out") == body("stepmark_hand_out.v3")  # one function: not overloaded
    run("0019_gold_only_beside_work", "create")
    assert source("stepmark_hand_out") == body("stepmark_hand_out.v4")

    run("0008_lock_sheet_function", "drop")
    assert definition("stepmark_lock_sheet") is None
    run("0008_lock_sheet_function", "create")
    assert source("stepmark_lock_sheet") == body("stepmark_lock_sheet.v1")


def test_version_two_is_version_one_with_the_two_edits_of_migration_0011():
    one, two = body("stepmark_hand_out.v1"), body("stepmark_hand_out.v2")
    own_work = ("AND a.project_id = p_project AND (a.state = 'active'",
                "AND a.project_id = p_project AND a.state IN ('active', 'expired')\n"
                "                 AND (a.state = 'active'")
    assert one.count(own_work[0]) == 1
    assert two == one.replace(*own_work)
    assert signature("stepmark_hand_out.v2") == signature("stepmark_hand_out.v1").replace(
        "VOLATILE AS", "VOLATILE SET plan_cache_mode = force_generic_plan AS")


def test_version_three_orders_by_the_queue_key_the_model_indexes():
    three = body("stepmark_hand_out.v3")
    assert queue_key("s.id") in three
    assert "s.selection_rank NULLS LAST, s.id" not in three
    assert "p_qc_phase" not in three and "p_gold_start bigint" in signature("stepmark_hand_out.v3")


def test_version_four_is_version_three_with_gold_only_beside_open_work():
    three, four = body("stepmark_hand_out.v3"), body("stepmark_hand_out.v4")
    gold_due = "IF p_gold_start IS NOT NULL AND NOT v_gold_tried THEN"
    assert three.count(gold_due) == 1
    assert "IF p_gold_start IS NOT NULL AND NOT v_gold_tried AND v_levels IS NOT NULL THEN" in four
    assert signature("stepmark_hand_out.v4") == signature("stepmark_hand_out.v3")
