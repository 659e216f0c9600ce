-- stepmark_hand_out, version 4: created by migration 0019 (version 3, migration 0012, with gold served only
-- where ordinary work is open for the annotator).
--
-- The queue's common hand-out in one round trip, on PostgreSQL only. queue.next_assignment asks it
-- first (queue._hand_out_in_one); when it returns no row the Python path runs as if it had not been
-- asked. It returns the hand-out's row and then one row per model step of the solution (the
-- payload's steps), or nothing: "ask the Python path". It takes the locks in the Python path's order.
--
-- Where each hand-out rule lives (labeling/work/queue.py names the Python side):
--   Python only. Here each case is only recognised, and the function declines, writing nothing:
--     a paused annotator ........................ next_assignment (Annotator.status)
--     the screening gate, a paused standing ..... screening.work_gate
--     own unfinished work to resume ............. _resume_own, _SQL_RESUME (active, or expired with a free slot)
--     lapsed leases in the project .............. _survey, _reap_lapsed
--     nothing open that nobody holds ............ _busy_candidate, _wait_for (wait, or "no work")
--   Python only, and handed in: whether gold is due and where to look (p_gold_start: NULL, or a
--     random point in queue-key order; queue.next_assignment draws both).
--   Written twice, here and in _claim_gold, _SQL_GOLD, _claim_open, _next_open, _SQL_OPEN, _count_live
--   and _hand_out:
--     gold due (after lapsed leases, so here: none in the project), tried in place of the first
--       candidate of ordinary work, only where ordinary work is open for the annotator: the first
--       gold item the annotator has not had from the random point in queue-key order (wrapping
--       round), its lock waited for; none left: ordinary work
--     order: newest generation first, unselected solutions last; within one, selection_rank (NULLs
--       last) then the queue key (queue.QUEUE_KEY, a fixed scramble of the id); the head of each
--       counter value compared, the earliest taken
--     never gold or screening items as ordinary work, never a solution the annotator has had
--     overlap: live assignments (active + submitted) counted under the solution's lock, its lapsed
--       leases expired there; a full solution is passed over (gold bypasses overlap)
--     a counter behind (work added outside the queue) is corrected, and the search goes on
--     rows another transaction holds are passed over (SKIP LOCKED)
--     the new assignment's fields and the counter's new value
--   tests/labeling/work/test_queue_function.py runs a scenario per rule through both paths.
--
-- Since version 3 (migration 0019 says why): a due gold item is served only where the generation has
-- ordinary work open for the annotator (v_levels not NULL); with none left in any generation the answer
-- is "no work" whatever the draw, as in queue._claim_open.
--
-- Since version 2 (migration 0012 says why): gold due is a draw made by the caller, not a schedule
-- from the annotator's id and count, and a gold hand-out is made here like any other; lapsed leases
-- are declined before gold; the queue order's last key is the scrambled id instead of the id.

CREATE OR REPLACE FUNCTION stepmark_hand_out(
    p_project bigint, p_annotator bigint, p_now timestamptz, p_lease_expires timestamptz,
    p_overlap integer, p_requires_screening boolean, p_gold_start bigint)
RETURNS TABLE (assignment_id bigint, solution_id bigint, problem_id bigint, generation_id bigint,
               generation_number integer, is_gold boolean, problem text, ground_truth_answer text,
               step_position integer, step_alternative integer, step_text text, step_source varchar,
               step_author bigint)
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $fn$
#variable_conflict use_column
DECLARE
    v_status varchar;
    v_standing varchar;
    v_gen record;
    v_levels integer[];
    v_level integer;
    v_solution bigint;
    v_problem bigint;
    v_generation bigint;
    v_number integer;
    v_gold boolean := false;
    v_gold_tried boolean := false;
    v_live bigint;
    v_lapsed bigint;
    v_id bigint;
BEGIN
    -- One person's tabs take turns (queue.next_assignment's first statement).
    SELECT a.status, (SELECT st.state FROM labeling_annotatorprojectstatus st
                      WHERE st.annotator_id = a.id AND st.project_id = p_project)
      INTO v_status, v_standing
      FROM labeling_annotator a WHERE a.id = p_annotator FOR UPDATE;
    IF NOT FOUND OR v_status <> 'active' THEN
        RETURN;
    END IF;
    -- screening.work_gate: only a plain "active" standing (or none, without screening).
    IF v_standing IS NULL THEN
        IF p_requires_screening THEN
            RETURN;
        END IF;
    ELSIF v_standing <> 'active' THEN
        RETURN;
    END IF;
    -- Own unfinished work comes back first (queue._resume_own).
    IF EXISTS (SELECT 1 FROM labeling_assignment a JOIN labeling_solution s ON s.id = a.solution_id
               WHERE a.annotator_id = p_annotator AND a.project_id = p_project AND a.state IN ('active', 'expired')
                 AND (a.state = 'active'
                   OR (a.state = 'expired' AND (s.live_assignments < p_overlap OR s.is_gold OR s.is_screening)))) THEN
        RETURN;
    END IF;

    -- Lapsed leases to reap (queue._reap_lapsed).
    IF EXISTS (SELECT 1 FROM labeling_assignment a
               WHERE a.project_id = p_project AND a.state = 'active' AND a.lease_expires_at < p_now) THEN
        RETURN;
    END IF;

    BEGIN
        <<generations>>
        FOR v_gen IN SELECT x.id, x.number FROM (
                         SELECT g.id, g.number FROM labeling_generation g WHERE g.project_id = p_project
                         UNION ALL SELECT NULL::bigint, NULL::integer) x
                     ORDER BY x.id IS NULL, x.number DESC LOOP
            LOOP  -- queue._claim_open: until this generation has no open solution left
                -- The head of each counter value, earliest in queue order first (queue._next_open).
                IF v_gen.id IS NULL THEN
                    SELECT array_agg(l.level ORDER BY h.selection_rank IS NULL, COALESCE(h.selection_rank, 0), h.queue_key)
                      INTO v_levels
                      FROM generate_series(0, p_overlap - 1) AS l(level)
                      CROSS JOIN LATERAL (
                          SELECT s.selection_rank, ((s.id * 2654435761) % 4294967296) AS queue_key FROM labeling_solution s
                           WHERE s.project_id = p_project AND s.generation_id IS NULL AND s.live_assignments = l.level
                             AND NOT s.is_gold AND NOT s.is_screening
                             AND NOT EXISTS (SELECT 1 FROM labeling_assignment a
                                             WHERE a.solution_id = s.id AND a.annotator_id = p_annotator)
                           ORDER BY s.project_id, s.generation_id, s.live_assignments, s.selection_rank NULLS LAST,
                                    ((s.id * 2654435761) % 4294967296)
                           LIMIT 1) h;
                ELSE
                    SELECT array_agg(l.level ORDER BY h.selection_rank IS NULL, COALESCE(h.selection_rank, 0), h.queue_key)
                      INTO v_levels
                      FROM generate_series(0, p_overlap - 1) AS l(level)
                      CROSS JOIN LATERAL (
                          SELECT s.selection_rank, ((s.id * 2654435761) % 4294967296) AS queue_key FROM labeling_solution s
                           WHERE s.project_id = p_project AND s.generation_id = v_gen.id AND s.live_assignments = l.level
                             AND NOT s.is_gold AND NOT s.is_screening
                             AND NOT EXISTS (SELECT 1 FROM labeling_assignment a
                                             WHERE a.solution_id = s.id AND a.annotator_id = p_annotator)
                           ORDER BY s.project_id, s.generation_id, s.live_assignments, s.selection_rank NULLS LAST,
                                    ((s.id * 2654435761) % 4294967296)
                           LIMIT 1) h;
                END IF;
                v_solution := NULL;
                -- Gold due (queue._claim_gold), tried once, where ordinary work would now take its
                -- candidate: a gold hand-out runs the statements of an ordinary one up to here.
                -- p_gold_start is a random point in queue-key order: the first gold item the
                -- annotator has not had from there, else from the lowest key, in one statement (a
                -- walk of solution_gold_idx each way). Its lock is waited for: this transaction
                -- holds no solution lock yet, and whoever holds a gold row's lock waits for nothing
                -- else. None left: ordinary work. Only where this generation has ordinary work open for
                -- the annotator: gold never comes where the answer would otherwise be "no work".
                IF p_gold_start IS NOT NULL AND NOT v_gold_tried AND v_levels IS NOT NULL THEN
                    v_gold_tried := true;
                    SELECT s.id, s.problem_id, s.generation_id,
                           (SELECT g.number FROM labeling_generation g WHERE g.id = s.generation_id)
                      INTO v_solution, v_problem, v_generation, v_number
                      FROM labeling_solution s
                     WHERE s.is_gold AND s.id = (
                         SELECT probe.id FROM (
                             SELECT 0 AS part, later.id FROM (
                                 SELECT g.id FROM labeling_solution g
                                  WHERE g.project_id = p_project AND g.is_gold AND NOT g.is_screening
                                    AND ((g.id * 2654435761) % 4294967296) >= p_gold_start
                                    AND NOT EXISTS (SELECT 1 FROM labeling_assignment a
                                                    WHERE a.solution_id = g.id AND a.annotator_id = p_annotator)
                                  ORDER BY g.project_id, ((g.id * 2654435761) % 4294967296) LIMIT 1) later
                             UNION ALL
                             SELECT 1 AS part, earlier.id FROM (
                                 SELECT g.id FROM labeling_solution g
                                  WHERE g.project_id = p_project AND g.is_gold AND NOT g.is_screening
                                    AND ((g.id * 2654435761) % 4294967296) >= 0
                                    AND NOT EXISTS (SELECT 1 FROM labeling_assignment a
                                                    WHERE a.solution_id = g.id AND a.annotator_id = p_annotator)
                                  ORDER BY g.project_id, ((g.id * 2654435761) % 4294967296) LIMIT 1) earlier
                         ) probe ORDER BY probe.part LIMIT 1)
                     FOR UPDATE OF s;
                    v_gold := v_solution IS NOT NULL;
                END IF;
                FOREACH v_level IN ARRAY CASE WHEN v_gold THEN '{}'::integer[]
                                              ELSE COALESCE(v_levels, '{}'::integer[]) END LOOP
                    IF v_gen.id IS NULL THEN
                        SELECT s.id, s.problem_id, s.generation_id INTO v_solution, v_problem, v_generation
                          FROM labeling_solution s
                         WHERE s.project_id = p_project AND s.generation_id IS NULL AND s.live_assignments = v_level
                           AND NOT s.is_gold AND NOT s.is_screening
                           AND NOT EXISTS (SELECT 1 FROM labeling_assignment a
                                           WHERE a.solution_id = s.id AND a.annotator_id = p_annotator)
                         ORDER BY s.project_id, s.generation_id, s.live_assignments, s.selection_rank NULLS LAST,
                                  ((s.id * 2654435761) % 4294967296)
                         LIMIT 1 FOR UPDATE OF s SKIP LOCKED;
                    ELSE
                        SELECT s.id, s.problem_id, s.generation_id INTO v_solution, v_problem, v_generation
                          FROM labeling_solution s
                         WHERE s.project_id = p_project AND s.generation_id = v_gen.id AND s.live_assignments = v_level
                           AND NOT s.is_gold AND NOT s.is_screening
                           AND NOT EXISTS (SELECT 1 FROM labeling_assignment a
                                           WHERE a.solution_id = s.id AND a.annotator_id = p_annotator)
                         ORDER BY s.project_id, s.generation_id, s.live_assignments, s.selection_rank NULLS LAST,
                                  ((s.id * 2654435761) % 4294967296)
                         LIMIT 1 FOR UPDATE OF s SKIP LOCKED;
                    END IF;
                    EXIT WHEN v_solution IS NOT NULL;
                END LOOP;
                EXIT WHEN v_solution IS NULL;  -- on to the next generation

                -- queue._count_live, under the solution's lock (a gold item's too: it bypasses overlap,
                -- but its counter is kept).
                SELECT count(*), COALESCE(sum(CASE WHEN a.state = 'active' AND a.lease_expires_at < p_now
                                              THEN 1 ELSE 0 END), 0)
                  INTO v_live, v_lapsed
                  FROM labeling_assignment a WHERE a.solution_id = v_solution AND a.state IN ('active', 'submitted');
                IF v_lapsed > 0 THEN
                    UPDATE labeling_assignment SET state = 'expired'
                     WHERE labeling_assignment.solution_id = v_solution AND state = 'active' AND lease_expires_at < p_now;
                END IF;
                v_live := v_live - v_lapsed;
                IF v_gold THEN
                    EXIT generations;  -- v_number is the gold item's generation's
                END IF;
                IF v_live < p_overlap THEN
                    v_number := v_gen.number;
                    EXIT generations;
                END IF;
                -- The counter was behind (work added outside the queue): correct it, look again.
                UPDATE labeling_solution SET live_assignments = v_live WHERE id = v_solution;
            END LOOP;
        END LOOP;
        IF v_solution IS NULL THEN
            RETURN;  -- nothing open that nobody holds: the full path waits or answers "no work"
        END IF;
    END;
    -- queue._hand_out.
    INSERT INTO labeling_assignment (project_id, solution_id, annotator_id, state, created_at, handed_out_at,
                                     last_activity_at, lease_expires_at, finish_note, generation,
                                     is_quality_control, is_screening)
    VALUES (p_project, v_solution, p_annotator, 'active', p_now, p_now, p_now, p_lease_expires, '',
            v_number, v_gold, false)
    RETURNING id INTO v_id;
    UPDATE labeling_solution SET live_assignments = v_live + 1 WHERE id = v_solution;

    assignment_id := v_id;
    solution_id := v_solution;
    problem_id := v_problem;
    generation_id := v_generation;
    generation_number := v_number;
    is_gold := v_gold;
    SELECT pr.problem, pr.ground_truth_answer INTO problem, ground_truth_answer
      FROM labeling_problem pr WHERE pr.id = v_problem;
    RETURN NEXT;
    -- The payload's steps: a new assignment sees the model's steps only.
    RETURN QUERY SELECT NULL::bigint, NULL::bigint, NULL::bigint, NULL::bigint, NULL::integer, NULL::boolean,
                        NULL::text, NULL::text, st.position::integer, st.alternative::integer, st.text, st.source,
                        st.author_id
                   FROM labeling_step st
                  WHERE st.solution_id = v_solution AND st.author_id IS NULL
                  ORDER BY st.position, st.alternative;
END;
$fn$;
