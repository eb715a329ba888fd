from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.permissions import AllowAny

from api import (
    annotate,
    auth,
    evaluations,
    metrics,
    pairs,
    predictions,
    releases,
    review,
    synthesis,
    views,
    webhooks,
)

app_name = "api"

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(permission_classes=[AllowAny]), name="schema"),
    path(
        "docs/",
        # The split view serves Swagger UI's start-up script as a file: the CSP runs no inline one.
        SpectacularSwaggerSplitView.as_view(url_name="api:schema", permission_classes=[AllowAny]),
        name="docs",
    ),
    path("auth/token/", auth.obtain_token, name="token"),
    path("projects/", views.ProjectList.as_view(), name="project-list"),
    path("projects/<slug:slug>/", views.ProjectDetail.as_view(), name="project-detail"),
    path("projects/<slug:slug>/pairs/", pairs.project_pairs_view, name="project-pairs"),
    path("projects/<slug:slug>/imports/", pairs.imports, name="project-imports"),
    path("projects/<slug:slug>/synthesize/", synthesis.synthesize, name="project-synthesize"),
    path("pairs/<int:pk>/", pairs.pair_detail, name="pair-detail"),
    path("jobs/<int:pk>/", pairs.job_detail, name="job-detail"),
    path("projects/<slug:slug>/disputes/", review.disputes, name="project-disputes"),
    path(
        "projects/<slug:slug>/predictions/",
        predictions.import_predictions,
        name="project-predictions",
    ),
    path("projects/<slug:slug>/preannotate/", predictions.preannotate, name="project-preannotate"),
    path("projects/<slug:slug>/agreement/", metrics.project_agreement, name="project-agreement"),
    path("pairs/<int:pk>/resolution/", review.resolution, name="pair-resolution"),
    path("projects/<slug:slug>/releases/", releases.project_releases, name="project-releases"),
    path("releases/<int:pk>/", releases.release_detail, name="release-detail"),
    path("releases/<int:pk>/files/<path:name>", releases.release_file, name="release-file"),
    path("releases/<int:pk>/records/", releases.release_records, name="release-records"),
    path(
        "releases/<int:pk>/evaluations/",
        evaluations.release_evaluations,
        name="release-evaluations",
    ),
    path("projects/<slug:slug>/webhooks/", webhooks.project_webhooks, name="project-webhooks"),
    path(
        "projects/<slug:slug>/webhooks/<int:pk>/",
        webhooks.webhook_detail,
        name="project-webhook",
    ),
    path(
        "projects/<slug:slug>/webhooks/<int:pk>/test/",
        webhooks.webhook_test,
        name="project-webhook-test",
    ),
    path(
        "projects/<slug:slug>/webhooks/<int:pk>/deliveries/",
        webhooks.webhook_deliveries,
        name="project-webhook-deliveries",
    ),
    path(
        "projects/<slug:slug>/webhooks/<int:pk>/deliveries/<uuid:delivery>/redeliver/",
        webhooks.webhook_redeliver,
        name="project-webhook-redeliver",
    ),
    path("webhooks/<int:pk>/", webhooks.webhook, name="webhook"),
    path("projects/<slug:slug>/next/", annotate.lease_next, name="lease-next"),
    path("assignments/<int:pk>/draft/", annotate.draft, name="assignment-draft"),
    path("assignments/<int:pk>/submit/", annotate.submit, name="assignment-submit"),
    path("assignments/<int:pk>/skip/", annotate.skip, name="assignment-skip"),
]
