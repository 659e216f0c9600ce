"""Root URLs: the pages, the REST API under /api/, its OpenAPI schema, and the admin."""
from django.contrib import admin
from django.urls import include, path
from annotator.api_docs import DocsView
from labeling.api.schema import SchemaView

handler404 = "labeling.api.not_found.not_found"  # JSON under /api/, Django's page elsewhere

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("labeling.access.accounts")),  # Django's, password reset only with mail
    path("api/schema/", SchemaView.as_view(), name="openapi-schema"),  # built once per process
    path("api/docs/", DocsView.as_view(url_name="openapi-schema"), name="api-docs"),
    path("api/", include("labeling.api.urls")),
    path("api/", include("scoring.api")),  # generation runs, checkpoints, retraining (researchers)
    path("", include("labeling.web.urls")),
]
