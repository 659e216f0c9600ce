"""One's own workspace keys: ``GET/PUT /api/me/keys/`` (the rules are labeling/workspace_keys.py).

Kept on the account's Annotator row, so a remapping follows the person to every machine; the
workspace page (labeling/web/pages.py) writes them into the page, the settings dialog PUTs them.
"""
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.parsers import JSONParser
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from labeling.access.permissions import IsAnnotator
from labeling.models import Annotator
from labeling.workspace_keys import DEFAULTS, keys_of, set_keys

from .work import annotator_of


class MyKeysSerializer(serializers.Serializer):
    keys = serializers.DictField(
        child=serializers.CharField(trim_whitespace=False),
        help_text="What this person changed, {action: key} (the key as KeyboardEvent.key names it); {} is the defaults.",
    )
    defaults = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField(trim_whitespace=False)), read_only=True,
        help_text="Every action and its default keys, in the workspace's order.",
    )


def _answer(keys):
    return Response(MyKeysSerializer({"keys": keys, "defaults": DEFAULTS}).data)


class MyKeysView(APIView):
    """The caller's workspace keys: what they changed over the defaults. PUT replaces them (``{"keys": {}}`` resets)."""

    renderer_classes = [JSONRenderer]
    parser_classes = [JSONParser]
    permission_classes = [IsAnnotator]

    @extend_schema(responses=MyKeysSerializer)
    def get(self, request):
        return _answer(keys_of(annotator_of(request.user)))

    @extend_schema(
        request=MyKeysSerializer,
        responses={200: MyKeysSerializer,
                   400: OpenApiResponse(description="An unknown action, a reserved key or a key bound twice; "
                                                    "field names the action (keys.good).")},
    )
    def put(self, request):
        body = request.data if isinstance(request.data, dict) else {}
        annotator = annotator_of(request.user) or Annotator.objects.get_or_create(user=request.user)[0]
        return _answer(set_keys(annotator, body.get("keys")))
