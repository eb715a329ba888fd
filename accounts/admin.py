from django.contrib import admin

from accounts.models import ApiToken
from accounts.throttle import AdminLoginForm

# The admin's log-in checks passwords too: the same limits as the browser's and the API's.
admin.site.login_form = AdminLoginForm


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["prefix", "user", "name", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = ["key_hash", "prefix", "created_at", "last_used_at"]
