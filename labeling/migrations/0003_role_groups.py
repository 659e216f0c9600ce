"""Create the role groups (annotator, lead, researcher) with their permissions.

Django creates permissions only after all migrations have run (post_migrate), so this
migration creates the three it needs itself; ``migrate`` alone then gives working roles.
The mapping is frozen here on purpose: labeling/access/roles.py may grow, a migration must not move.
"""
from django.db import migrations

ROLE_PERMISSIONS = {
    "annotator": [("label", "Can rate steps")],
    "lead": [("lead", "Can manage quality control and annotators")],
    "researcher": [("research", "Can import, export and run model jobs")],
}


def create_groups(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")
    Group = apps.get_model("auth", "Group")
    project_type, _ = ContentType.objects.get_or_create(app_label="labeling", model="project")
    for role, permissions in ROLE_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=role)
        for codename, name in permissions:
            permission, _ = Permission.objects.get_or_create(
                content_type=project_type, codename=codename, defaults={"name": name}
            )
            group.permissions.add(permission)


def remove_groups(apps, schema_editor):
    # Groups only: a user's other memberships and the permissions' rows are left alone.
    apps.get_model("auth", "Group").objects.filter(name__in=ROLE_PERMISSIONS).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("labeling", "0002_project_role_permissions"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(create_groups, remove_groups)]
