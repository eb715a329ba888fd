from django.contrib import admin

from annotator.models import (
    Annotation,
    Assignment,
    Change,
    GoldAnswer,
    Pair,
    PairEvent,
    Prediction,
)


@admin.register(Pair)
class PairAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "external_id", "status", "width_a", "height_a", "created_at"]
    list_filter = ["project", "status"]
    search_fields = ["external_id", "sha256_a", "sha256_b"]
    raw_id_fields = ["import_job"]


class ChangeInline(admin.StackedInline):
    model = Change
    extra = 0


@admin.register(Annotation)
class AnnotationAdmin(admin.ModelAdmin):
    list_display = ["id", "pair", "annotator", "tier", "created_at"]
    raw_id_fields = ["assignment", "pair", "annotator"]
    inlines = [ChangeInline]


admin.site.register(Assignment, raw_id_fields=["pair", "annotator"])
admin.site.register(Prediction, raw_id_fields=["pair", "job"])
admin.site.register(PairEvent, raw_id_fields=["pair", "actor"])


@admin.register(GoldAnswer)
class GoldAnswerAdmin(admin.ModelAdmin):
    list_display = ["pair", "source", "created_at"]
    raw_id_fields = ["pair"]
