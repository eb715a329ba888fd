"""The ``annotator:`` URL namespace: the annotators' routes (home, leasing, the workspace, pair
images)."""

from django.urls import path

from annotator import views

app_name = "annotator"

urlpatterns = [
    path("", views.home, name="home"),
    path("p/<slug:slug>/next/", views.lease_next, name="lease_next"),
    path("p/<slug:slug>/ahead/", views.lease_ahead, name="lease_ahead"),
    path("a/<int:pk>/", views.workspace, name="workspace"),
    path("a/<int:pk>/edit/", views.annotation_edit, name="annotation_edit"),
    path("pairs/<int:pk>/image/<str:side>/", views.pair_image, name="pair_image"),
    path("pairs/<int:pk>/thumb/<str:side>/", views.pair_thumb, name="pair_thumb"),
]
