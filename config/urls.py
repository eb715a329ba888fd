from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("", include("accounts.urls_session")),
    path("admin/", admin.site.urls),
    path("api/v1/", include("api.urls")),
    path("review/", include("review.urls")),
    path("review/", include("releases.urls")),
    path("account/", include("accounts.urls")),
    path("", include("annotator.urls")),
    path("", include("console.urls")),
]
handler400 = "api.errors.bad_request"
handler404 = "api.errors.page_not_found"
handler500 = "api.errors.server_error"
