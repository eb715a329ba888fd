from django.urls import path

from review import views

app_name = "review"

urlpatterns = [
    path("<slug:slug>/disputes/", views.disputes, name="disputes"),
    path("<slug:slug>/spot-check/", views.spot_check, name="spot_check"),
    path("pairs/<int:pk>/", views.adjudicate, name="adjudicate"),
]
