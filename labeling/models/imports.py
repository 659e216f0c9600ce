from django.conf import settings
from django.db import models


class ImportJob(models.Model):
    """One upload imported by a worker (labeling/imports/jobs.py): the file on disk, the job's
    state and, once it ends, what it stored or why it stored nothing.

    While it runs, the live counts (lines read, records stored, bytes read) are kept outside
    this row (``jobs.live``): the import writes in one transaction, and a row it wrote in would
    show nothing to the page until it commits, and would be locked against the page's cancel.
    """

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"
    STATE_CHOICES = [(s, s) for s in (QUEUED, RUNNING, DONE, FAILED, CANCELLED)]
    OPEN_STATES = (QUEUED, RUNNING)

    # No index of its own: import_job_state_idx (project, state) leads with it.
    project = models.ForeignKey("labeling.Project", on_delete=models.CASCADE, related_name="import_jobs", db_index=False)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="+")
    format = models.CharField(max_length=50)
    options = models.JSONField(default=dict, blank=True, help_text="The format's options (split, pattern, generator).")
    file_name = models.CharField(max_length=255, help_text="The uploaded file's name, as errors name it.")
    path = models.CharField(max_length=1000, help_text="The upload on disk (STEPMARK_IMPORT_DIR) until the job ends.")
    requests_path = models.CharField(max_length=1000, blank=True, help_text="openai-batch: the Batch input file on disk.")
    state = models.CharField(max_length=20, choices=STATE_CHOICES, default=QUEUED)
    lines_read = models.PositiveBigIntegerField(default=0)
    records_stored = models.PositiveBigIntegerField(default=0)
    bytes_total = models.PositiveBigIntegerField(default=0)
    bytes_read = models.PositiveBigIntegerField(default=0)
    result = models.JSONField(null=True, blank=True, help_text="ImportResult.as_dict() of a finished import.")
    error = models.TextField(blank=True)
    error_file = models.CharField(max_length=255, blank=True)
    error_line = models.PositiveBigIntegerField(null=True, blank=True)
    error_field = models.CharField(max_length=255, blank=True)
    task_id = models.CharField(max_length=255, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["project", "-pk"]
        indexes = [models.Index(fields=["project", "state"], name="import_job_state_idx")]

    def __str__(self):
        return f"Import {self.pk} of {self.file_name} into {self.project} ({self.state})"
