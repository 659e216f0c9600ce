"""Signing in from scripts (a token) and asking who one is."""
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.exceptions import Throttled
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.throttling import AnonRateThrottle
from rest_framework.views import APIView

from labeling.access.lockout import cool_off_seconds, lockout_message
from labeling.access.roles import roles_of
from labeling.api.tokens import IssueTokenView, NewTokenSerializer


class LoginThrottle(AnonRateThrottle):
    # Slows password guessing; generous enough for scripts that log in now and then.
    scope = "login"
    rate = "30/minute"

    def get_rate(self):
        return self.rate


class TokenView(IssueTokenView):
    """POST username and password, get a new API token of the account (``Authorization: Token <key>``).

    Each login makes its own token (``name`` says what for), valid for STEPMARK_TOKEN_TTL_HOURS.
    """

    permission_classes = [AllowAny]
    throttle_classes = [LoginThrottle]

    @extend_schema(
        operation_id="auth_token_create",
        request=inline_serializer("TokenRequest", {"username": serializers.CharField(),
                                                    "password": serializers.CharField(),
                                                    "name": serializers.CharField(required=False)}),
        responses={200: NewTokenSerializer},
        auth=[],
    )
    def post(self, request, *args, **kwargs):
        try:
            return super().post(request, *args, **kwargs)
        except serializers.ValidationError:
            # The lockout backend refused before any password was checked (axes marks DRF's
            # request, which its middleware never sees): say so, as the login pages do.
            if getattr(request, "axes_locked_out", False):
                raise Throttled(wait=cool_off_seconds(request), detail=lockout_message(request)) from None
            raise


class MeSerializer(serializers.Serializer):
    username = serializers.CharField()
    roles = serializers.ListField(child=serializers.CharField())
    annotator = serializers.UUIDField(allow_null=True, help_text="The labeler UUID written to exports.")
    is_staff = serializers.BooleanField()


class MeView(APIView):
    """The signed-in account: name, roles, and the annotator UUID when there is one.

    Open to any signed-in account, role or not, so that a page can tell a new user to ask
    for a role.
    """

    permission_classes = [IsAuthenticated]

    @extend_schema(responses=MeSerializer)
    def get(self, request):
        user = request.user
        annotator = getattr(user, "annotator", None)
        data = {
            "username": user.get_username(),
            "roles": roles_of(user),
            "annotator": annotator.uuid if annotator is not None else None,
            "is_staff": user.is_staff,
        }
        return Response(MeSerializer(data).data)
