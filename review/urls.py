from django.urls import path

from review import views, views_dashboard

app_name = "review"

urlpatterns = [
    path("<slug:slug>/disputes/", views.disputes, name="disputes"),
    path("<slug:slug>/spot-check/", views.spot_check, name="spot_check"),
    path("pairs/<int:pk>/", views.adjudicate, name="adjudicate"),
    path("assignments/<int:pk>/gold-feedback/", views.gold_feedback, name="gold_feedback"),
    path("<slug:slug>/dashboard/", views_dashboard.dashboard, name="dashboard"),
]
