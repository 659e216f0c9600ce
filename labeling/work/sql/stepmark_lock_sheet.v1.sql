-- stepmark_lock_sheet, version 1: created by migration 0008.
--
-- A draft save's or submit's lock and reads in one round trip, on PostgreSQL only
-- (submission._lock_with_sheet). Returns nothing when the solution does not exist; else a first
-- row with the assignment's mutable fields (all NULL when the assignment does not exist), then one
-- row per sheet step in position, alternative order.
--
-- No labelling rule lives here: it reads what the Python path reads, in the same order, and
-- submission.py checks the rules on the result. Its twin statements: queue.lock_solution
-- (_SQL_SOLUTION's lock, then _SQL_RELOAD of queue.MUTABLE_FIELDS) and submission._SQL_SHEET (every
-- model step and the assignment's own human steps, with its ratings).
-- tests/labeling/work/test_submission_function.py compares the two.

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
