from django.db import models


class Diagram(models.Model):
    """An Asymptote diagram (``[asy]...[/asy]`` in a problem or a step) and its drawing.

    One row per code, found by ``sha256`` (of the exact code between the tags, UTF-8), so the
    same diagram in many problems or projects is drawn once; ``projects`` are the projects whose
    text holds it (who may fetch it). A background job draws it after an import
    (labeling/diagrams/): ``svg`` is the sanitised drawing, ``error`` what Asymptote said when
    it could not draw it.
    """

    PENDING, DRAWN, FAILED = "pending", "drawn", "failed"
    STATUSES = [(PENDING, "pending"), (DRAWN, "drawn"), (FAILED, "failed")]

    sha256 = models.CharField(max_length=64, unique=True)
    code = models.TextField()
    status = models.CharField(max_length=10, choices=STATUSES, default=PENDING)
    svg = models.TextField(blank=True)
    error = models.TextField(blank=True)
    draw_seconds = models.FloatField(null=True, blank=True, help_text="How long Asymptote took.")
    drawn_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    projects = models.ManyToManyField("labeling.Project", related_name="diagrams", through="DiagramProject")

    def __str__(self):
        return f"diagram {self.sha256[:12]} ({self.status})"


class DiagramProject(models.Model):
    """A project whose text holds the diagram: who may fetch it."""

    # diagram_project_unique leads with the diagram: no index of its own.
    diagram = models.ForeignKey(Diagram, on_delete=models.CASCADE, db_index=False)
    project = models.ForeignKey("labeling.Project", on_delete=models.CASCADE)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["diagram", "project"], name="diagram_project_unique")]
