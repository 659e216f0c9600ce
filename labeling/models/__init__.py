"""Stepmark's data model, one module per domain.

- ``projects``: Project, the unit of work with its labelling rules, and Membership (who holds
  which role in it).
- ``content``: Problem, Generation, Solution and Step (the text people rate).
- ``work``: Annotator, Assignment and Rating (what people did).
- ``diagrams``: Diagram (an [asy] diagram of the text and its drawing).
- ``imports``: ImportJob (an upload imported by a worker, its progress and outcome).
- ``tokens``: ApiToken (an account's API tokens, hashed, with their expiry).
- ``audit``: AuditEntry (a lead's or researcher's action) and ReportResolution (a lead's answer to
  an annotator's give-up or bad-problem report).
- ``machine``: LabelSource and StepLabel (step labels from a PRM, an LLM judge, Monte Carlo
  rollouts or an imported file, with their provenance, kept beside people's ratings).
- ``quality``: GoldRating (a gold item's reference ratings, approved by a lead), GoldScore,
  AnnotatorProjectStatus, GoldProposal and Adjudication.
"""
from .audit import AuditEntry, ReportResolution
from .content import Generation, Problem, Solution, Step
from .diagrams import Diagram, DiagramProject
from .imports import ImportJob
from .machine import LabelSource, StepLabel
from .projects import Membership, Project
from .quality import Adjudication, AnnotatorProjectStatus, GoldProposal, GoldRating, GoldScore
from .tokens import ApiToken
from .work import Annotator, Assignment, FinishReason, Rating

__all__ = [
    "Adjudication",
    "Annotator",
    "AuditEntry",
    "AnnotatorProjectStatus",
    "ApiToken",
    "Assignment",
    "Diagram",
    "DiagramProject",
    "FinishReason",
    "Generation",
    "ImportJob",
    "LabelSource",
    "GoldProposal",
    "GoldRating",
    "GoldScore",
    "Membership",
    "Problem",
    "Project",
    "Rating",
    "ReportResolution",
    "Solution",
    "Step",
    "StepLabel",
]
