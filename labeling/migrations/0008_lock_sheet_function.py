"""``stepmark_lock_sheet``: a save's or submit's lock and reads in one round trip, on PostgreSQL only.

``labeling.work.submission`` starts every draft save and submit by taking the solution's row lock,
reloading the assignment's mutable fields (read after the lock, so that they include what
the last lock holder committed) and reading the sheet: the steps the assignment may rate
with its ratings. As separate statements those are three round trips, all but the first
made while holding the lock. Inside a function each statement takes its own snapshot after
the lock, exactly as the separate statements did, and the web process waits once.

Returns nothing when the solution does not exist; else a first row with the assignment's
mutable fields (all NULL when the assignment does not exist), then one row per sheet step
in ``labelling._SQL_SHEET``'s order. tests/labeling/work/test_submission_function.py compares it
with the separate statements.
"""
from django.db import migrations

FUNCTION = r"""
CREATE OR REPLACE FUNCTION stepmark_lock_sheet(p_solution bigint, p_assignment bigint, p_human varchar)
RETURNS TABLE (state varchar, last_activity_at timestamptz, lease_expires_at timestamptz,
               submitted_at timestamptz, total_time bigint, finish_reason varchar, finish_note text,
               submit_key varchar,
               step_id bigint, step_position integer, step_alternative integer, step_text text,
               step_source varchar, step_author bigint, step_solution bigint,
               rating_id bigint, rating_value smallint, rating_flagged boolean, rating_chosen boolean)
LANGUAGE plpgsql VOLATILE AS $fn$
#variable_conflict use_column
BEGIN
    PERFORM 1 FROM labeling_solution s WHERE s.id = p_solution FOR UPDATE;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    RETURN QUERY
        SELECT a.state::varchar, a.last_activity_at, a.lease_expires_at, a.submitted_at, a.total_time,
               a.finish_reason::varchar, a.finish_note, a.submit_key::varchar,
               NULL::bigint, NULL::integer, NULL::integer, NULL::text, NULL::varchar, NULL::bigint, NULL::bigint,
               NULL::bigint, NULL::smallint, NULL::boolean, NULL::boolean
          FROM (SELECT 1) one LEFT JOIN labeling_assignment a ON a.id = p_assignment;
    RETURN QUERY
        SELECT NULL::varchar, NULL::timestamptz, NULL::timestamptz, NULL::timestamptz, NULL::bigint,
               NULL::varchar, NULL::text, NULL::varchar,
               s.id, s.position, s.alternative, s.text, s.source::varchar, s.author_id, s.solution_id,
               r.id, r.value, r.flagged, r.chosen
          FROM labeling_step s LEFT JOIN labeling_rating r ON r.step_id = s.id AND r.assignment_id = p_assignment
         WHERE s.solution_id = p_solution AND (s.source <> p_human OR s.author_id = p_assignment)
         ORDER BY s.position, s.alternative;
END;
$fn$;
"""

DROP = "DROP FUNCTION IF EXISTS stepmark_lock_sheet(bigint, bigint, varchar);"


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(FUNCTION)


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):

    dependencies = [
        ("labeling", "0007_hand_out_function"),
    ]

    operations = [migrations.RunPython(create, drop)]
