"""The account pages under /accounts/: Django's, with password reset only where mail can reach people.

Without a mail server (``EMAIL_HOST`` unset) a reset request could only fail or pile up
unsent, so the four reset pages answer 404. With one, a reset request is throttled per client
address and per e-mail address (the shared cache, as every web process counts together), so
nobody can flood an inbox or the mail server.
"""
import hashlib
from functools import wraps

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import urls as auth_urls
from django.contrib.auth.views import PasswordResetConfirmView
from django.http import Http404
from django.shortcuts import render
from django.urls import path, reverse_lazy
from rest_framework.throttling import SimpleRateThrottle

RESET_PAGES = {"password_reset", "password_reset_done", "password_reset_confirm", "password_reset_complete"}


class ResetByAddress(SimpleRateThrottle):
    scope = "password_reset_address"
    rate = "5/hour"

    def get_rate(self):
        return self.rate

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class ResetByEmail(ResetByAddress):
    scope = "password_reset_email"
    rate = "3/hour"

    def get_cache_key(self, request, view):
        email = request.POST.get("email", "").strip().lower()
        return self.cache_format % {"scope": self.scope, "ident": hashlib.sha256(email.encode()).hexdigest()}


def mail_configured(view):
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if not settings.EMAIL_HOST:
            raise Http404("Password reset is off: no mail server is configured (EMAIL_HOST).")
        return view(request, *args, **kwargs)

    return wrapper


def throttled(view):
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if request.method == "POST":
            # Every throttle counts the request (no short-circuit): each limit holds on its own.
            refused = [t for t in (ResetByAddress(), ResetByEmail()) if not t.allow_request(request, None)]
            if refused:
                wait = max(t.wait() or 0 for t in refused)
                message = f"Too many password reset requests: try again in {max(1, round(wait / 60))} minutes."
                response = render(request, "registration/refused.html", {"message": message}, status=429)
                response["Retry-After"] = str(int(wait))
                return response
        return view(request, *args, **kwargs)

    return wrapper


def _guarded(pattern):
    if pattern.name not in RESET_PAGES:
        return pattern
    view = mail_configured(throttled(pattern.callback) if pattern.name == "password_reset" else pattern.callback)
    return path(str(pattern.pattern), view, name=pattern.name)


class Welcome(PasswordResetConfirmView):
    """A new account's first password, from the one-time link a lead was given when making it
    (``labeling.access.members.create_member``): Django's reset confirmation, which needs no mail."""

    template_name = "registration/welcome.html"
    success_url = reverse_lazy("login")

    def form_valid(self, form):
        messages.success(self.request, "Your password is set: log in with it.")
        return super().form_valid(form)


urlpatterns = [_guarded(pattern) for pattern in auth_urls.urlpatterns] + [
    path("welcome/<uidb64>/<token>/", Welcome.as_view(), name="welcome"),
]
