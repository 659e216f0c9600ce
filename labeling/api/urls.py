"""The labelling REST API (DRF): thin views over the domain functions.

Every view declares its permission (labeling/access/permissions.py); tests/labeling/api/test_security.py
walks these routes and checks that anonymous and role-less users are refused.
"""
from django.urls import path
from rest_framework.routers import SimpleRouter

from . import (
    audit, auth, content, dashboard, diagrams, exports, imports, keys, label_sources, members, projects,
    quality, research, source_agreement, tokens, work,
)

app_name = "api"

# SimpleRouter, not DefaultRouter: no browsable root that would need its own permission.
router = SimpleRouter()
router.register("projects", projects.ProjectViewSet, basename="project")
router.register("problems", content.ProblemViewSet, basename="problem")
router.register("solutions", content.SolutionViewSet, basename="solution")

urlpatterns: list = [
    path("auth/token/", auth.TokenView.as_view(), name="auth-token"),
    path("me/", auth.MeView.as_view(), name="me"),
    # One's own API tokens and "log out everywhere" (labeling/api/tokens.py).
    path("me/tokens/", tokens.MyTokensView.as_view(), name="me-tokens"),
    path("me/tokens/<int:token_id>/", tokens.MyTokenView.as_view(), name="me-token"),
    path("me/logout-everywhere/", tokens.LogoutEverywhereView.as_view(), name="me-logout-everywhere"),
    # A project's members and their roles (labeling/api/members.py): its leads manage them.
    path("projects/<int:pk>/members/", members.MembersView.as_view(), name="project-members"),
    path("projects/<int:pk>/members/<int:membership_id>/", members.MemberView.as_view(), name="project-member"),
    # Imports run as jobs on a worker (labeling/imports/jobs.py); the preview stores nothing.
    path("projects/<int:pk>/imports/", imports.ImportView.as_view(), name="project-import"),
    path("projects/<int:pk>/imports/preview/", imports.ImportPreviewView.as_view(), name="project-import-preview"),
    path("import-jobs/<int:pk>/", imports.ImportJobView.as_view(), name="import-job"),
    path("import-jobs/<int:pk>/cancel/", imports.ImportJobCancelView.as_view(), name="import-job-cancel"),
    path("import-formats/", imports.ImportFormatsView.as_view(), name="import-formats"),
    # Machine labels' sources with their counts (labeling/api/label_sources.py).
    path("projects/<int:pk>/label-sources/", label_sources.LabelSourceListView.as_view(),
         name="project-label-sources"),
    path("projects/<int:pk>/next/", work.NextView.as_view(), name="project-next"),
    path("assignments/<int:pk>/", work.AssignmentView.as_view(), name="assignment-detail"),
    path("assignments/<int:pk>/draft/", work.DraftView.as_view(), name="assignment-draft"),
    path("assignments/<int:pk>/submit/", work.SubmitView.as_view(), name="assignment-submit"),
    path("assignments/<int:pk>/unsubmit/", work.UnsubmitView.as_view(), name="assignment-unsubmit"),
    path("me/assignments/", work.HistoryView.as_view(), name="me-assignments"),
    path("me/counts/", work.CountsView.as_view(), name="me-counts"),
    # One's own workspace keys (labeling/api/keys.py).
    path("me/keys/", keys.MyKeysView.as_view(), name="me-keys"),
    # Quality control (labeling/api/quality.py): leads, but my-status (the annotator's own).
    path("solutions/<int:pk>/gold/", quality.SolutionGoldView.as_view(), name="solution-gold"),
    path("solutions/<int:pk>/gold/from-assignment/", quality.GoldFromAssignmentView.as_view(),
         name="solution-gold-from-assignment"),
    path("solutions/<int:pk>/gold/propose/", quality.GoldProposeView.as_view(), name="solution-gold-propose"),
    path("solutions/<int:pk>/consensus/", quality.ConsensusView.as_view(), name="solution-consensus"),
    path("projects/<int:pk>/gold-proposals/", quality.ProposalListView.as_view(), name="project-gold-proposals"),
    path("gold-proposals/<int:pk>/approve/", quality.ProposalApproveView.as_view(), name="gold-proposal-approve"),
    path("gold-proposals/<int:pk>/reject/", quality.ProposalRejectView.as_view(), name="gold-proposal-reject"),
    path("projects/<int:pk>/prelabel-settings/", quality.PrelabelSettingsView.as_view(),
         name="project-prelabel-settings"),
    path("projects/<int:pk>/quality-settings/", quality.QualitySettingsView.as_view(),
         name="project-quality-settings"),
    path("projects/<int:pk>/annotators/<int:annotator_id>/pause/", quality.PauseView.as_view(),
         name="project-annotator-pause"),
    path("projects/<int:pk>/annotators/<int:annotator_id>/resume/", quality.ResumeView.as_view(),
         name="project-annotator-resume"),
    path("projects/<int:pk>/my-status/", quality.MyStatusView.as_view(), name="project-my-status"),
    path("projects/<int:pk>/my-missed/", quality.MyMissedPassesView.as_view(), name="project-my-missed"),
    path("projects/<int:pk>/disagreements/", quality.DisagreementListView.as_view(), name="project-disagreements"),
    path("projects/<int:pk>/dashboard/", dashboard.DashboardView.as_view(), name="project-dashboard"),
    path("projects/<int:pk>/annotators/", dashboard.AnnotatorTableView.as_view(), name="project-annotators"),
    path("projects/<int:pk>/flag-settings/", dashboard.FlagSettingsView.as_view(), name="project-flag-settings"),
    path("projects/<int:pk>/annotators/<int:annotator_id>/passes/", dashboard.AnnotatorPassesView.as_view(),
         name="project-annotator-passes"),
    # The audit log of leads' and researchers' actions, and the reports inbox (labeling/api/audit.py).
    path("projects/<int:pk>/audit/", audit.AuditLogView.as_view(), name="project-audit"),
    path("projects/<int:pk>/reports/", audit.ReportListView.as_view(), name="project-reports"),
    # Agreement between label sources: people, PRM, judge, rollouts (labeling/api/source_agreement.py).
    path("projects/<int:pk>/source-agreement/", source_agreement.SourceAgreementView.as_view(),
         name="project-source-agreement"),
    path("projects/<int:pk>/source-disagreements/", source_agreement.SourceDisagreementsView.as_view(),
         name="project-source-disagreements"),
    path("assignments/<int:pk>/resolve/", audit.ReportResolveView.as_view(), name="assignment-resolve"),
    # The export, snapshots (labeling/api/exports.py) and research figures (research.py).
    path("projects/<int:pk>/export/", exports.ExportView.as_view(), name="project-export"),
    path("projects/<int:pk>/snapshots/", exports.SnapshotListView.as_view(), name="project-snapshots"),
    path("projects/<int:pk>/snapshots/<str:name>/", exports.SnapshotDownloadView.as_view(),
         name="project-snapshot-download"),
    path("projects/<int:pk>/generation-stats/", research.GenerationStatsView.as_view(),
         name="project-generation-stats"),
    # The drawn [asy] diagrams of a project's text (labeling/api/diagrams.py).
    path("projects/<int:pk>/diagrams/<str:sha256>.svg", diagrams.DiagramView.as_view(), name="project-diagram"),
    *router.urls,
]
