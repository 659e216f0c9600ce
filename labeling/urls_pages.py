"""Page URLs (HTML for people); the REST API lives under /api/ (labeling/api/urls.py)."""
from django.urls import path

from . import views

urlpatterns = [
    path("", views.home, name="home"),
    path("projects/<int:pk>/work/", views.workspace, name="workspace"),
    path("projects/<int:pk>/dashboard/", views.dashboard, name="dashboard"),
    path("projects/<int:pk>/dashboard/annotators/<int:annotator_id>/", views.dashboard_annotator,
         name="dashboard-annotator"),
    path("projects/<int:pk>/research/", views.research, name="research"),
]
