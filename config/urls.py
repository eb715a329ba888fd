from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from accounts import views as accounts_views

urlpatterns = [
    path("login/", accounts_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/v1/", include("api.urls")),
    path("review/", include("review.urls")),
    path("review/", include("releases.urls")),
    path("account/", include("accounts.urls")),
    path("", include("console.urls")),
]
handler400 = "api.errors.bad_request"
handler404 = "api.errors.page_not_found"
handler500 = "api.errors.server_error"
