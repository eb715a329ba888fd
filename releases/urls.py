"""The release pages; mounted under review/ as before (config/urls.py), their paths unchanged."""

from django.urls import path

from releases import views, views_questions

app_name = "releases"

urlpatterns = [
    path("<slug:slug>/releases/", views.releases, name="releases"),
    path("releases/<int:pk>/", views.release, name="release"),
    path("releases/<int:pk>/retry/", views.release_rebuild, name="release_retry"),
    path("releases/<int:pk>/evaluate/", views.release_evaluate, name="release_evaluate"),
    path("<slug:slug>/questions/", views_questions.questions, name="questions"),
    path("pairs/<int:pk>/question/", views_questions.question, name="question"),
]
