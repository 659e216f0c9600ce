"""Stepmark's data model, one module per domain.

- ``projects``: Project, the unit of work with its labelling rules.
- ``content``: Problem, Generation, Solution and Step (the text people rate).
- ``work``: Annotator, Assignment and Rating (what people did).
- ``quality``: GoldRating (lead-approved answers for quality control).
"""
from .content import Generation, Problem, Solution, Step
from .projects import Project
from .quality import GoldRating
from .work import Annotator, Assignment, FinishReason, Rating

__all__ = [
    "Annotator",
    "Assignment",
    "FinishReason",
    "Generation",
    "GoldRating",
    "Problem",
    "Project",
    "Rating",
    "Solution",
    "Step",
]
