"""What PageNumberPagination answers, spelled out for the function views: drf-spectacular only
sees pagination on generic list views, and would document these lists as bare arrays."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

PAGE = OpenApiParameter("page", int, description="page number, from 1; 404 past the last page")
CURSOR = OpenApiParameter(
    "cursor",
    str,
    description="instead of page: empty for the first page, then the cursor in `next`; every "
    "page costs the same however deep (the answer has next and previous, no count)",
)


def paginated(
    name: str, results: serializers.Field, *, cursor: bool = False, capped: bool = False
) -> type[serializers.Serializer]:
    """A serializer class (component ``Paginated<name>List``) for one page of ``results``;
    ``cursor``: the list also answers ``?cursor=``, whose pages carry no count; ``capped``:
    the count may stop at a cap (``count_capped``)."""
    count = (
        serializers.IntegerField(required=False, help_text="absent on ?cursor= pages")
        if cursor
        else serializers.IntegerField()
    )
    fields: dict[str, serializers.Field] = {"count": count}
    if capped:
        fields["count_capped"] = serializers.BooleanField(
            help_text="true: the count stopped at its cap and more rows follow"
        )
    fields |= {
        "next": serializers.URLField(allow_null=True),
        "previous": serializers.URLField(allow_null=True),
        "results": results,
    }
    return type(f"Paginated{name}ListSerializer", (serializers.Serializer,), fields)
