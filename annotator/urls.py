from django.urls import path

from annotator import views

app_name = "annotator"

urlpatterns = [
    path("", views.home, name="home"),
    path("p/<slug:slug>/", views.project_detail, name="project"),
    path("p/<slug:slug>/next/", views.lease_next, name="lease_next"),
    path("a/<int:pk>/", views.workspace, name="workspace"),
    path("pairs/<int:pk>/", views.pair_detail, name="pair"),
    path("pairs/<int:pk>/image/<str:side>/", views.pair_image, name="pair_image"),
    path("pairs/<int:pk>/thumb/<str:side>/", views.pair_thumb, name="pair_thumb"),
]
