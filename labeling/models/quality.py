from django.conf import settings
from django.db import models
from django.db.models import Q


class GoldRating(models.Model):
    """The lead-approved rating of one step of a gold solution."""

    step = models.OneToOneField("labeling.Step", on_delete=models.CASCADE, related_name="gold")
    value = models.SmallIntegerField()
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    approved_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(value__gte=-1) & Q(value__lte=1), name="gold_value_range"),
        ]

    def __str__(self):
        return f"gold {self.value:+d} for step {self.step_id}"
