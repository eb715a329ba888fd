from django.contrib import admin

from review.models import GoldAnswer


@admin.register(GoldAnswer)
class GoldAnswerAdmin(admin.ModelAdmin):
    list_display = ["pair", "source", "created_at"]
    raw_id_fields = ["pair"]
