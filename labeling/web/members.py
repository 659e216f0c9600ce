"""The members page (/projects/{id}/members/): the project's leads add and remove members.

Plain forms, no script (post, redirect, get); a refusal is shown beside the form. The rules
are labeling/access/members.py's, the same the API uses (labeling/api/members.py).
"""
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from labeling.access import members as rules
from labeling.access.projects import project_for
from labeling.access.roles import LEAD, ROLES
from labeling.errors import DomainError


@login_required
@require_http_methods(["GET", "POST"])
def members_page(request, pk):
    project = project_for(request.user, pk, LEAD)
    error, form, made = None, {"username": "", "role": "", "action": ""}, None
    if request.method == "POST":
        action = request.POST.get("action")
        try:
            if action == "add":
                form = {"username": request.POST.get("username", ""), "role": request.POST.get("role", ""),
                        "action": action}
                membership, _ = rules.add_member(project, form["username"], form["role"], by=request.user)
                messages.success(request, f"{membership.user.get_username()} is now {membership.role} here.")
            elif action == "create":
                form = {"username": request.POST.get("username", ""), "role": request.POST.get("role", ""),
                        "action": action}
                membership, link = rules.create_member(project, form["username"], form["role"], by=request.user,
                                                       email=request.POST.get("email", ""))
                # Shown once, in this answer (not after a redirect): the lead hands it over.
                made = {"username": membership.user.get_username(), "role": membership.role,
                        "link": request.build_absolute_uri(link)}
            elif action == "remove":
                membership = request.POST.get("membership", "")
                if not membership.isdigit():
                    raise DomainError("Name the membership to end.", "membership")
                rules.remove_member(project, int(membership), by=request.user)
                messages.success(request, "The membership has ended.")
            else:
                raise DomainError("Unknown action: add, create or remove.", "action")
            if made is None:
                return redirect("members", pk=project.pk)
        except DomainError as refused:
            error = refused
    status = error.status if error else 200
    return render(request, "labeling/members.html", {
        "project": project, "members": rules.members(project), "roles": ROLES, "error": error, "form": form,
        "made": made,
    }, status=status)

