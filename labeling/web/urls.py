"""Page URLs (HTML for people); the REST API lives under /api/ (labeling/api/urls.py)."""
from django.urls import path

from labeling.web import account, favicon, members, pages

urlpatterns = [
    path("", pages.home, name="home"),
    path("favicon.ico", favicon.favicon, name="favicon"),
    path("projects/new/", pages.new_project, name="new-project"),
    path("projects/<int:pk>/settings/", pages.project_settings, name="project-settings"),
    path("projects/<int:pk>/work/", pages.workspace, name="workspace"),
    path("projects/<int:pk>/dashboard/", pages.dashboard, name="dashboard"),
    path("projects/<int:pk>/dashboard/annotators/<int:annotator_id>/", pages.dashboard_annotator,
         name="dashboard-annotator"),
    path("projects/<int:pk>/quality/", pages.quality, name="quality"),
    path("projects/<int:pk>/audit/", pages.audit_log, name="audit"),
    path("projects/<int:pk>/inbox/", pages.inbox, name="inbox"),
    path("projects/<int:pk>/checks/", pages.my_missed, name="my-missed"),
    path("projects/<int:pk>/passes/", pages.my_passes, name="my-passes"),
    path("projects/<int:pk>/research/", pages.research, name="research"),
    path("projects/<int:pk>/members/", members.members_page, name="members"),
    path("account/tokens/", account.tokens_page, name="account-tokens"),
]
