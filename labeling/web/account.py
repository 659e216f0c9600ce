"""The API tokens page (/account/tokens/): one's own tokens, a new one, revoking, log out everywhere.

Plain forms, no script: a new token's key is kept in the session only until the page after
the form shows it once (post, redirect, get), so reloading neither repeats nor re-shows it.
The rules are labeling/access/tokens.py's; the same actions are in the API (labeling/api/tokens.py).
"""
from django.conf import settings
from django.contrib.auth import logout
from django.contrib.auth.decorators import login_required
from django.http import HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods

from labeling.access import tokens
from labeling.models import ApiToken

NEW_KEY = "stepmark_new_token"


@login_required
@require_http_methods(["GET", "POST"])
def tokens_page(request):
    if request.method == "POST":
        action = request.POST.get("action")
        if action == "create":
            key, _ = tokens.issue(request.user, request.POST.get("name", "").strip())
            request.session[NEW_KEY] = key
        elif action == "revoke" and request.POST.get("token", "").isdigit():
            tokens.revoke(request.user, int(request.POST["token"]))
        elif action == "logout-everywhere":
            tokens.log_out_everywhere(request.user)
            logout(request)
            return redirect("login")
        else:
            return HttpResponseBadRequest("Unknown action: create, revoke (with a token id) or logout-everywhere.")
        return redirect("account-tokens")
    rows = ApiToken.objects.filter(user=request.user).order_by("-created_at", "-pk")
    return render(request, "labeling/tokens.html", {
        "tokens": rows, "new_key": request.session.pop(NEW_KEY, None), "now": timezone.now(),
        "ttl_hours": settings.STEPMARK_TOKEN_TTL_HOURS,
    })
