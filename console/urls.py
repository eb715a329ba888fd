"""The ``console:`` URL namespace: the leads' project pages. Their paths are those the app
always had (mounted at the site's root beside annotator.urls)."""

from django.urls import path

from console import views, views_pairs, views_screening, views_webhooks

app_name = "console"

urlpatterns = [
    path("p/<slug:slug>/", views_pairs.project_detail, name="project"),
    path("pairs/<int:pk>/", views_pairs.pair_detail, name="pair"),
    path("projects/new/", views.project_new, name="project_new"),
    path("p/<slug:slug>/settings/", views.project_settings, name="project_settings"),
    path("p/<slug:slug>/members/", views.members, name="members"),
    path("p/<slug:slug>/members/<int:user_id>/role/", views.member_role, name="member_role"),
    path(
        "p/<slug:slug>/members/<int:user_id>/remove/",
        views.member_remove,
        name="member_remove",
    ),
    path("p/<slug:slug>/upload/", views.upload, name="upload"),
    path("p/<slug:slug>/upload/pair/", views.upload_pair, name="upload_pair"),
    path(
        "p/<slug:slug>/upload/synthesize/",
        views.upload_synthesize,
        name="upload_synthesize",
    ),
    path("p/<slug:slug>/jobs/", views.jobs, name="jobs"),
    path("p/<slug:slug>/screening/", views_screening.screening, name="screening"),
    path("jobs/<int:pk>/", views.job_detail, name="job"),
    path("jobs/<int:pk>/cancel/", views.job_stop, name="job_cancel"),
    path("p/<slug:slug>/preannotate/", views.preannotate, name="preannotate"),
    path("p/<slug:slug>/webhooks/", views_webhooks.webhooks, name="webhooks"),
    path(
        "p/<slug:slug>/webhooks/<int:pk>/test/",
        views_webhooks.webhook_test,
        name="webhook_test",
    ),
    path(
        "p/<slug:slug>/webhooks/<int:pk>/delete/",
        views_webhooks.webhook_delete,
        name="webhook_delete",
    ),
    path(
        "p/<slug:slug>/webhooks/<int:pk>/deliveries/<uuid:delivery>/redeliver/",
        views_webhooks.webhook_redeliver,
        name="webhook_redeliver",
    ),
]
