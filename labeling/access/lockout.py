"""Password guessing: lockouts by account and by client address (django-axes), and their answers.

After ``AXES_FAILURE_LIMIT`` failed logins for one username (from anywhere) or from one client
address (for any username) within ``AXES_COOLOFF_TIME``, every login form refuses that account
or address, the right password included, until the cool-off ends or an admin deletes the
attempt under Axes › Access attempts. The failures live in the database, so every web process
sees the same count. The client address is ``REMOTE_ADDR`` as
``labeling.access.client_address`` sets it.
"""
from axes.backends import AxesStandaloneBackend
from axes.helpers import get_cool_off
from django.http import JsonResponse
from django.shortcuts import render


class LockoutBackend(AxesStandaloneBackend):
    """Refuses a locked-out account or address before any password is checked (first backend).

    Only requests are locked out: ``authenticate()`` without one is the server's own code (the
    test client's ``login``, a shell), with no client to lock out, where axes' own backend
    raises instead.
    """

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username, password, **kwargs)


def cool_off_seconds(request=None):
    cool_off = get_cool_off(request)
    return int(cool_off.total_seconds()) if cool_off else None


def lockout_message(request=None):
    seconds = cool_off_seconds(request)
    wait = f"try again in {max(1, round(seconds / 60))} minutes" if seconds else "the lock stays until it is lifted"
    return (f"Too many failed log-ins for this account or from this address: {wait}, "
            "or ask an administrator to unlock it (admin: Axes › Access attempts).")


def lockout_response(request, original_response=None, credentials=None):
    """AXES_LOCKOUT_CALLABLE: a 429 a person can read (the login page's frame) or JSON for the API."""
    message = lockout_message(request)
    if request.path.startswith("/api/"):
        response = JsonResponse({"detail": message}, status=429)
    else:
        response = render(request, "registration/refused.html", {"message": message}, status=429)
    seconds = cool_off_seconds(request)
    if seconds:
        response["Retry-After"] = str(seconds)
    return response
