"""Migration 0016 turns the global roles of before into memberships: an upgrade loses nobody's access."""
from tests.migrating import at_the_newest_migrations_afterwards, migrate  # noqa: F401 (a fixture)

BEFORE = [("labeling", "0015_api_token")]
AFTER = [("labeling", "0016_project_membership")]


def test_roles_of_before_become_memberships_of_every_project_and_back(at_the_newest_migrations_afterwards):
    old = migrate(BEFORE)
    User, Group = old.get_model("auth", "User"), old.get_model("auth", "Group")
    Project, Permission = old.get_model("labeling", "Project"), old.get_model("auth", "Permission")
    Project.objects.create(name="one"), Project.objects.create(name="two")
    people = {name: User.objects.create(username=name) for name in ("ann", "lea", "res", "both", "staff", "root", "new")}
    people["root"].is_superuser = True
    people["root"].save()
    people["staff"].is_staff = True
    people["staff"].save()
    for name, groups in {"ann": ["annotator"], "lea": ["lead"], "both": ["lead", "researcher"]}.items():
        people[name].groups.add(*[Group.objects.get_or_create(name=group)[0] for group in groups])
    # A role's permission given straight on the account (the admin's user form) counts too.
    # (Made here if missing: a flush by an earlier test leaves only the permissions of today's models.)
    ContentType = old.get_model("contenttypes", "ContentType")
    project_type, _ = ContentType.objects.get_or_create(app_label="labeling", model="project")
    research, _ = Permission.objects.get_or_create(content_type=project_type, codename="research",
                                                   defaults={"name": "Can import, export and run model jobs"})
    people["res"].user_permissions.add(research)

    new = migrate(AFTER)
    Membership = new.get_model("labeling", "Membership")
    held = {(m.user.username, m.project.name, m.role) for m in Membership.objects.select_related("user", "project")}
    expected = {(who, p, role) for p in ("one", "two") for who, roles in {
        "ann": ["annotator"], "lea": ["lead"], "res": ["researcher"], "both": ["lead", "researcher"],
        "staff": ["annotator", "lead", "researcher"]}.items() for role in roles}
    assert held == expected  # superusers need no rows, an account without a role gets none
    creators = set(new.get_model("auth", "User").objects.filter(
        user_permissions__codename="add_project").values_list("username", flat=True))
    assert creators == {"lea", "res", "both", "staff"}
    assert new.get_model("labeling", "Annotator").objects.filter(user__username__in=["ann", "staff"]).count() == 2
    assert not new.get_model("auth", "Group").objects.filter(name__in=["annotator", "lead", "researcher"]).exists()

    back = migrate(BEFORE)
    groups = {g.name: set(g.user_set.values_list("username", flat=True))
              for g in back.get_model("auth", "Group").objects.filter(name__in=["annotator", "lead", "researcher"])}
    assert groups == {"annotator": {"ann", "staff"}, "lead": {"lea", "both", "staff"},
                      "researcher": {"res", "both", "staff"}}
