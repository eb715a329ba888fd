from django.contrib import admin

from projects.models import Membership, Project


class MembershipInline(admin.TabularInline):
    model = Membership
    raw_id_fields = ["user"]
    extra = 0


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "preset", "overlap", "created_at"]
    inlines = [MembershipInline]
