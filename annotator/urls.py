from django.urls import path

from annotator import manage_views, screening_views, views

app_name = "annotator"

urlpatterns = [
    path("", views.home, name="home"),
    path("p/<slug:slug>/", views.project_detail, name="project"),
    path("p/<slug:slug>/next/", views.lease_next, name="lease_next"),
    path("p/<slug:slug>/ahead/", views.lease_ahead, name="lease_ahead"),
    path("a/<int:pk>/", views.workspace, name="workspace"),
    path("a/<int:pk>/edit/", views.annotation_edit, name="annotation_edit"),
    path("pairs/<int:pk>/", views.pair_detail, name="pair"),
    path("pairs/<int:pk>/image/<str:side>/", views.pair_image, name="pair_image"),
    path("pairs/<int:pk>/thumb/<str:side>/", views.pair_thumb, name="pair_thumb"),
    path("projects/new/", manage_views.project_new, name="project_new"),
    path("p/<slug:slug>/settings/", manage_views.project_settings, name="project_settings"),
    path("p/<slug:slug>/members/", manage_views.members, name="members"),
    path("p/<slug:slug>/members/<int:user_id>/role/", manage_views.member_role, name="member_role"),
    path(
        "p/<slug:slug>/members/<int:user_id>/remove/",
        manage_views.member_remove,
        name="member_remove",
    ),
    path("p/<slug:slug>/upload/", manage_views.upload, name="upload"),
    path("p/<slug:slug>/upload/pair/", manage_views.upload_pair, name="upload_pair"),
    path(
        "p/<slug:slug>/upload/synthesize/",
        manage_views.upload_synthesize,
        name="upload_synthesize",
    ),
    path("p/<slug:slug>/jobs/", manage_views.jobs, name="jobs"),
    path("p/<slug:slug>/screening/", screening_views.screening, name="screening"),
    path("jobs/<int:pk>/", manage_views.job_detail, name="job"),
    path("jobs/<int:pk>/cancel/", manage_views.job_stop, name="job_cancel"),
    path("p/<slug:slug>/preannotate/", manage_views.preannotate, name="preannotate"),
]
