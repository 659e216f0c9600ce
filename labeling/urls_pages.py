"""Page URLs (HTML for people); the REST API lives under /api/ (labeling/api/urls.py)."""
from django.urls import path

from . import views

urlpatterns = [
    path("", views.home, name="home"),
    path("projects/<int:pk>/work/", views.workspace, name="workspace"),
]
