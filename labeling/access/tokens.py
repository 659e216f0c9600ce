"""API tokens that end: made, checked and revoked here (the row: labeling/models/tokens.py).

- ``issue``: a new key for an account, valid for ``STEPMARK_TOKEN_TTL_HOURS``; the key is
  returned once and only its SHA-256 is stored (``digest``). Keys are 256 random bits, so a
  plain hash is enough: nobody can guess one to test against it.
- ``TokenAuthentication``: DRF's ``Authorization: Token <key>`` scheme over ``ApiToken``: one
  indexed lookup by the key's digest, then ``accept`` refuses an expired token by name and
  writes its last use at most once a minute, never on every request. DRF imports this module
  while it loads its settings, so it imports no DRF view.
- ``revoke_all``: on a password change (``on_user_saved``, connected in labeling/apps.py) and
  on "log out everywhere" (``log_out_everywhere``, which ends the account's sessions too).
"""
import datetime
import hashlib
import secrets

from django.conf import settings
from django.utils import timezone
from django.utils.module_loading import import_string
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication
from rest_framework.exceptions import AuthenticationFailed

from labeling.models import ApiToken
from labeling.models.prepared import first, prepared

PREFIX_LENGTH = 8
# A last use older than this is written again; newer ones only read.
NOTE_USE_EVERY = datetime.timedelta(minutes=1)
# Live tokens one account may hold; a new one past this replaces the oldest (a script that
# logs in on every run would otherwise pile them up until they expire).
MAX_PER_USER = 50


def digest(key):
    return hashlib.sha256(key.encode()).hexdigest()


def issue(user, name="", now=None):
    """``(key, token)``: a new token of ``user``, valid for the configured time from ``now``."""
    now = now or timezone.now()
    key = secrets.token_urlsafe(32)
    ApiToken.objects.filter(user=user, expires_at__lte=now).delete()
    live = ApiToken.objects.filter(user=user).order_by("-created_at", "-pk").values_list("pk", flat=True)
    ApiToken.objects.filter(pk__in=list(live[MAX_PER_USER - 1:])).delete()
    token = ApiToken.objects.create(
        user=user, name=name[:100], digest=digest(key), prefix=key[:PREFIX_LENGTH],
        expires_at=now + datetime.timedelta(hours=settings.STEPMARK_TOKEN_TTL_HOURS),
    )
    return key, token


class TokenAuthentication(authentication.TokenAuthentication):
    """DRF's token scheme over ``ApiToken``: refused when unknown, expired, or its user inactive."""

    model = ApiToken

    def authenticate_credentials(self, key):
        # With the user's Annotator row, if any: every annotator request asks for it.
        token = first(_token(digest(key)))
        if token is None:
            raise AuthenticationFailed(_("Invalid token."))
        user = token.user
        if not user.is_active:
            raise AuthenticationFailed(_("User inactive or deleted."))
        now = timezone.now()
        if token.expires_at <= now:
            raise AuthenticationFailed(_("Token expired: ask for a new one (POST /api/auth/token/)."))
        if token.last_used_at is None or now - token.last_used_at >= NOTE_USE_EVERY:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
            token.last_used_at = now
        return user, token


@prepared
def _token(key_digest):
    return ApiToken.objects.select_related("user__annotator").filter(digest=key_digest).order_by()[:1]


def revoke(user, token_id):
    """Delete one of ``user``'s tokens; whether there was one."""
    return ApiToken.objects.filter(user=user, pk=token_id).delete()[0] > 0


def revoke_all(user):
    """Delete every token of ``user``; how many."""
    return ApiToken.objects.filter(user=user).delete()[0]


def log_out_everywhere(user):
    """Revoke ``user``'s tokens and end each of their sessions, in every browser.

    Django keeps no index of sessions by account, so the live ones are read and those of
    ``user`` deleted: a rare action, a read of the session table (the database session
    engines, Django's default and Stepmark's). Returns ``(tokens, sessions)``.
    """
    store = import_string(f"{settings.SESSION_ENGINE}.SessionStore")
    ended = 0
    for key, data in store.get_model_class().objects.filter(expire_date__gt=timezone.now()).values_list(
            "session_key", "session_data"):
        if store().decode(data).get("_auth_user_id") == str(user.pk):
            store(session_key=key).delete()
            ended += 1
    return revoke_all(user), ended


def on_user_saved(sender, instance, created, **kwargs):
    """A new password ends the account's tokens, as it ends its other sessions.

    ``set_password`` leaves the new password in ``_password`` until the save that stores it
    (after this signal); a login that only upgrades the hash clears it first, so that does not
    count as a change.
    """
    if not created and getattr(instance, "_password", None) is not None:
        revoke_all(instance)
