"""Shapes of the REST bodies. Validation of answers lives in pairdiff.answers, not here."""

from rest_framework import serializers

from annotator.models import Defect, Tier
from pairdiff import strictjson
from projects.models import Project


def _boxes() -> serializers.ListField:
    box = serializers.ListField(child=serializers.IntegerField(), min_length=4, max_length=4)
    return serializers.ListField(child=box, help_text="[[x1, y1, x2, y2], …]; [] = absent side")


class StrictJSONField(serializers.JSONField):
    """DRF's JSONField reads a form field's text with json.loads, which recurses until Python
    gives up (a 500 at 10,000 levels) and keeps NaN, 1e309 and lone surrogates; this one reads
    it with pairdiff.strictjson, and checks a value a JSON body already decoded the same way."""

    def to_internal_value(self, data):
        try:
            if isinstance(data, str):
                return strictjson.loads(data)
            strictjson.check(data)
        except strictjson.JSONRejected as exc:
            raise serializers.ValidationError(str(exc)) from None
        return data


class ProjectSerializer(serializers.ModelSerializer):
    role = serializers.SerializerMethodField()
    counts = serializers.SerializerMethodField()

    class Meta:
        model = Project
        fields = [
            "slug",
            "name",
            "description",
            "preset",
            "categories",
            "overlap",
            "question_control_rate",
            "role",
            "counts",
        ]
        extra_kwargs = {"question_control_rate": {"min_value": 0.0, "max_value": 0.5}}

    def get_role(self, project: Project) -> str | None:
        return self.context["roles"].get(project.pk)

    def get_counts(self, project: Project) -> dict:
        return self.context["counts"](project)


class ChangeSerializer(serializers.Serializer):
    category = serializers.CharField()
    description = serializers.CharField()
    entity_a = serializers.CharField(allow_blank=True)
    entity_b = serializers.CharField(allow_blank=True)
    boxes_a = _boxes()
    boxes_b = _boxes()


class AnswerSerializer(serializers.Serializer):
    """The submit and draft body; boxes in pixels of each image's displayed frame."""

    tier = serializers.ChoiceField(choices=Tier.choices)
    defects = serializers.ListField(child=serializers.ChoiceField(choices=Defect.choices))
    time_spent_ms = serializers.IntegerField(min_value=0)
    changes = ChangeSerializer(many=True)


class ImageSerializer(serializers.Serializer):
    url = serializers.CharField()
    width = serializers.IntegerField()
    height = serializers.IntegerField()


class LeasedPairSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    external_id = serializers.CharField()
    instruction = serializers.CharField()
    image_a = ImageSerializer()
    image_b = ImageSerializer()


class AssignmentSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    expires_at = serializers.DateTimeField()
    pair = LeasedPairSerializer()


class LeaseSerializer(serializers.Serializer):
    assignment = AssignmentSerializer()


class DraftSavedSerializer(serializers.Serializer):
    saved_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField(allow_null=True)
    lease = serializers.ChoiceField(choices=["held", "lost"])


class AnnotationSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    assignment = serializers.IntegerField(source="assignment_id")
    pair = serializers.IntegerField(source="pair_id")
    tier = serializers.CharField()
    defects = serializers.ListField(child=serializers.CharField())
    time_spent_ms = serializers.IntegerField()
    changes = ChangeSerializer(many=True, source="changes.all")
    created_at = serializers.DateTimeField()


class SubmitResultSerializer(serializers.Serializer):
    annotation = AnnotationSerializer()


class ErrorBodySerializer(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()
    # DRF's metaclass takes declared fields out of the class, so this leaves Serializer.fields be.
    fields = serializers.DictField(child=serializers.ListField(child=serializers.CharField()))  # type: ignore[assignment]


class ErrorSerializer(serializers.Serializer):
    error = ErrorBodySerializer()
