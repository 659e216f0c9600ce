"""The schema generator's view of each operation: drf-spectacular's, plus the common refusals.

A view declares its own answers (its 2xx, and a refusal particular to it); ``AutoSchema`` adds
the refusals that come from the API's common machinery (labeling/api/errors.py, limits.py,
the permission classes, the URL's ids), each with its body, so that every operation declares
every status it can answer (issue #26). ``tests/labeling/api/test_schema_fuzz.py`` keeps that
true: a schemathesis run checks each answer's status and body against the schema. A module
of its own: ``REST_FRAMEWORK["DEFAULT_SCHEMA_CLASS"]`` is imported while DRF's views are.
"""
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.plumbing import ResolvedComponent
from rest_framework.permissions import AllowAny

# The bodies of refusals. ``Refusal``: labeling.errors.DomainError's answer (``field`` and an
# import's ``line`` included) and DRF's own ``{"detail"}`` (403, 404, 405, 415, 429). ``FieldErrors``:
# DRF's serializer validation, ``{field: [messages]}`` (nested serializers nest objects).
REFUSAL = {
    "type": "object",
    "properties": {
        "detail": {"type": "string", "description": "What was refused, for a person to read."},
        "field": {"type": "string", "nullable": True,
                  "description": "The input that was refused (`ratings[2].value`, `limit`, `body`...); null: the whole request."},
        "line": {"type": "integer", "nullable": True, "description": "An import's line that was refused."},
        "revision": {"type": "string", "description": "A submit refused for its finish keeps the ratings as a "
                                                      "draft: the draft's revision."},
    },
    "required": ["detail"],
}
FIELD_ERRORS = {
    "type": "object",
    "description": "DRF's serializer errors: each refused field with its messages.",
    "minProperties": 1,
    "additionalProperties": {"anyOf": [{"type": "array", "items": {}}, {"type": "object"}]},
}


class AutoSchema(SpectacularAutoSchema):
    """drf-spectacular's AutoSchema plus the refusals every operation of its kind may answer.

    ``REST_FRAMEWORK["DEFAULT_SCHEMA_CLASS"]``. A view's own declaration of a status wins; one
    without a body gets the common body.
    """

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        refusals = self._refusals()
        for code, (description, _) in refusals.items():
            responses.setdefault(code, {"description": description})
        for code, declared in responses.items():
            if int(code) >= 400 and not declared.get("content"):  # a view's refusal declared by its description
                schema = refusals[code][1] if code in refusals else self._component("Refusal", REFUSAL)
                declared["content"] = {"application/json": {"schema": schema}}
        return responses

    def _refusals(self):
        refusal = self._component("Refusal", REFUSAL)
        bad_input = {"anyOf": [refusal, self._component("FieldErrors", FIELD_ERRORS)]}
        has_body = self.method in ("POST", "PUT", "PATCH") and self.get_request_serializer() is not None
        refusals = {}
        if has_body or self._get_parameters_of("query"):
            refusals["400"] = ("Input that cannot be taken: the refusal names the field.", bad_input)
        if not all(isinstance(check, AllowAny) for check in self.view.get_permissions()):
            refusals["403"] = ("Not signed in, or without the role this needs.", refusal)
        if self._get_parameters_of("path"):
            refusals["404"] = ("No such row for you: it exists nowhere, or in a project you do not see.", refusal)
        if has_body:
            refusals["413"] = ("The body is over its size limit (labeling/api/limits.py).", refusal)
            refusals["415"] = ("A body in a media type this operation does not take.", refusal)
        if self.view.throttle_classes:
            refusals["429"] = ("Too many requests: ``Retry-After`` says when to ask again.", refusal)
        refusals["503"] = ("A backing service is away: ``Retry-After`` says when to ask again.", refusal)
        return refusals

    def _get_parameters_of(self, location):
        return [p for p in self._get_parameters() if p.get("in") == location]

    def _component(self, name, schema):
        component = ResolvedComponent(name=name, type=ResolvedComponent.SCHEMA, object=name, schema=schema)
        self.registry.register_on_missing(component)
        return component.ref
