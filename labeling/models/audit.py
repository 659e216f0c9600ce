"""The audit log of leads' and researchers' actions, and the resolution of annotators' reports.

Rows are written by ``labeling.audit.record`` only, inside the transaction of the action they
describe (labeling/audit/__init__.py says why), and never changed afterwards.
"""
from django.conf import settings
from django.db import models


class AuditEntry(models.Model):
    """One action of a lead or researcher in a project: who, when, what before and after, why.

    ``actor_name`` keeps the username as it was: the entry still says who after the account is
    renamed or deleted (``actor`` then goes null). ``target`` names the row acted on in words
    ("annotator 7", "solution 12"); ``before`` and ``after`` are JSON of what changed.
    """

    project = models.ForeignKey("labeling.Project", on_delete=models.CASCADE, related_name="audit_entries",
                                db_index=False)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    actor_name = models.CharField(max_length=150, blank=True)
    action = models.CharField(max_length=40)
    target = models.CharField(max_length=200, blank=True)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    reason = models.TextField(blank=True)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # The page reads a project's entries newest first, filtered by action or actor on top.
        indexes = [models.Index(fields=["project", "-at"], name="audit_project_at_idx")]

    def __str__(self):
        return f"{self.action} by {self.actor_name or 'the system'} at {self.at:%Y-%m-%d %H:%M}"


class ReportResolution(models.Model):
    """A lead's resolution of an annotator's give-up or bad-problem report (a submitted pass)."""

    assignment = models.OneToOneField("labeling.Assignment", on_delete=models.CASCADE, related_name="resolution")
    resolved_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="+")
    resolved_at = models.DateTimeField(auto_now_add=True)
    note = models.TextField(blank=True)

    def __str__(self):
        return f"resolution of assignment {self.assignment_id}"
