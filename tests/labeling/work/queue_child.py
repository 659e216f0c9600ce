"""A claimer run in a separate (spawned) process by the concurrency test.

Spawned, not forked: a fork copies whatever locks other threads of the test process held at
that moment (the grading pool's reader threads, client libraries), and a child can hang on
one. A spawned child starts clean and opens its own connection to the test database.
"""
import os


def claim_until_empty(annotator_id, project_id, database_name, later_seconds, out):
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotator.settings")
    import django

    django.setup()
    from datetime import datetime, timezone

    from django.db import connections

    connections["default"].settings_dict["NAME"] = database_name
    try:
        from labeling.models import Annotator, Project
        from labeling.work import queue, submission

        now = datetime.fromtimestamp(later_seconds, tz=timezone.utc)
        annotator, project = Annotator.objects.get(pk=annotator_id), Project.objects.get(pk=project_id)
        got = []
        while (a := queue.next_assignment(annotator, project, now=now)) is not None:
            got.append(a.pk)
            submission.submit(a, finish_reason="give_up", note="n", now=now)
        out.put((annotator_id, got, None))
    except BaseException as exc:  # noqa: BLE001 - sent to the parent
        out.put((annotator_id, [], repr(exc)))
    finally:
        connections.close_all()
