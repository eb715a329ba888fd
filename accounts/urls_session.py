"""Logging in and out. Their URL names ("login", "logout") are site-wide, without a namespace:
settings.LOGIN_URL and LOGOUT_REDIRECT_URL name them."""

from django.contrib.auth import views as auth_views
from django.urls import path

from accounts import views

urlpatterns = [
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
]
