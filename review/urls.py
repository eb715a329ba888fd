from django.urls import path

from review import views, views_dashboard, views_questions, views_releases

app_name = "review"

urlpatterns = [
    path("<slug:slug>/disputes/", views.disputes, name="disputes"),
    path("<slug:slug>/spot-check/", views.spot_check, name="spot_check"),
    path("pairs/<int:pk>/", views.adjudicate, name="adjudicate"),
    path("assignments/<int:pk>/gold-feedback/", views.gold_feedback, name="gold_feedback"),
    path("<slug:slug>/dashboard/", views_dashboard.dashboard, name="dashboard"),
    path("<slug:slug>/releases/", views_releases.releases, name="releases"),
    path("releases/<int:pk>/", views_releases.release, name="release"),
    path("releases/<int:pk>/retry/", views_releases.release_rebuild, name="release_retry"),
    path("releases/<int:pk>/evaluate/", views_releases.release_evaluate, name="release_evaluate"),
    path("<slug:slug>/questions/", views_questions.questions, name="questions"),
    path("pairs/<int:pk>/question/", views_questions.question, name="question"),
]
