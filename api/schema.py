"""The answers every operation can give, added to the schema once instead of on every view."""

from __future__ import annotations

_ERROR = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
_COMMON = {
    "401": "no or an invalid token (or session)",
    "415": "a body in a media type the operation does not read",
}


def add_common_errors(result, generator, request, public):
    """drf-spectacular post-processing hook: 401 on operations that need credentials, 415 on
    those that take a body. Both come with the JSON error shape (api.errors)."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            wanted = []
            if any(operation.get("security", [])):
                wanted.append("401")
            if "requestBody" in operation:
                wanted.append("415")
            for code in wanted:
                responses.setdefault(code, {"content": _ERROR, "description": _COMMON[code]})
    return result
