"""API tokens over the API: the login that issues one, and a person's own list.

- ``IssueTokenView``: username and password in, a new token out (auth.TokenView adds the
  lockout answer).
- ``/api/me/tokens/``: list one's tokens, make one (only from a browser session: a token
  cannot make itself a successor that outlives it), revoke one; ``/api/me/logout-everywhere/``
  ends every token and session of the account.
The rules (lifetime, hashing, revoking) and the token check are in labeling/access/tokens.py.
"""
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from labeling.access import tokens
from labeling.models import ApiToken


class TokenSerializer(serializers.ModelSerializer):
    current = serializers.SerializerMethodField(help_text="The token this request came with.")

    class Meta:
        model = ApiToken
        fields = ["id", "name", "prefix", "created_at", "last_used_at", "expires_at", "current"]
        read_only_fields = fields

    def get_current(self, token) -> bool:
        request = self.context.get("request")
        return isinstance(getattr(request, "auth", None), ApiToken) and request.auth.pk == token.pk


class NewTokenSerializer(TokenSerializer):
    token = serializers.CharField(help_text="The key: shown this once, only its hash is kept.")

    class Meta(TokenSerializer.Meta):
        fields = ["token", *TokenSerializer.Meta.fields]


def new_token_answer(request, user, name, code=status.HTTP_201_CREATED):
    key, token = tokens.issue(user, name)
    token.token = key
    return Response(NewTokenSerializer(token, context={"request": request}).data, status=code)


class IssueTokenView(ObtainAuthToken):
    """POST username and password (and a ``name`` for the token), get a new token of the account."""

    def post(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        name = request.data.get("name", "")
        # 200, as DRF's login answered when it handed out the account's one token.
        return new_token_answer(request, serializer.validated_data["user"], name if isinstance(name, str) else "",
                                code=status.HTTP_200_OK)


class NameSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100, required=False, allow_blank=True)


class MyTokensView(APIView):
    """The caller's API tokens, newest first; POST makes a new one (from a browser session only)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses=TokenSerializer(many=True))
    def get(self, request):
        rows = ApiToken.objects.filter(user=request.user).order_by("-created_at", "-pk")
        return Response(TokenSerializer(rows, many=True, context={"request": request}).data)

    @extend_schema(request=NameSerializer, responses={201: NewTokenSerializer})
    def post(self, request):
        if request.auth is not None:
            raise PermissionDenied("A token cannot make another: log in with your password (POST /api/auth/token/)"
                                   " or use the API tokens page.")
        data = NameSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        return new_token_answer(request, request.user, data.validated_data.get("name", ""))


class MyTokenView(APIView):
    """Revoke one of the caller's tokens (another person's does not exist for them)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={204: OpenApiResponse(description="Revoked."),
                              404: OpenApiResponse(description="No such token of yours.")})
    def delete(self, request, token_id):
        if not tokens.revoke(request.user, token_id):
            raise NotFound("No such token of yours.")
        return Response(status=status.HTTP_204_NO_CONTENT)


class LogoutEverywhereView(APIView):
    """End every token and every browser session of the caller's account, this one included."""

    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={200: inline_serializer("LoggedOutEverywhere", {
        "tokens": serializers.IntegerField(), "sessions": serializers.IntegerField()})})
    def post(self, request):
        revoked, ended = tokens.log_out_everywhere(request.user)
        return Response({"tokens": revoked, "sessions": ended})
