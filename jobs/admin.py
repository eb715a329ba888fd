from django.contrib import admin

from jobs.models import Job


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ["id", "kind", "status", "project", "done", "total", "created_at"]
    list_filter = ["kind", "status"]
