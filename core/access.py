"""The two staff roles, as Django groups with their permissions (RELIABILITY 15).

- **Project managers** run campaigns in the admin: every model permission of the
  annotation app, and read access to user accounts so they can attach an annotator
  profile to one. Members must also be ``is_staff`` to reach the admin at all.
- **Researchers** read: view permissions only (annotation and evaluation), so the admin
  shows them campaigns, captions and progress but no form saves and no action runs.

Annotators belong to neither group and are never staff.

``roles_ensure`` is idempotent and sets each group's permissions to exactly the listed
ones, so re-running it also takes back a permission granted by hand. It works on the
live app registry (commands, tests) and on a migration's historical ``apps``.
"""

from __future__ import annotations

from django.apps import apps as global_apps
from django.contrib.auth.management import create_permissions
from django.db import transaction

PROJECT_MANAGERS = "Project managers"
RESEARCHERS = "Researchers"
ROLES = (PROJECT_MANAGERS, RESEARCHERS)

# (app label, codename prefixes) per role; a prefix of "" would mean every permission.
_ROLE_PERMISSIONS: dict[str, list[tuple[str, tuple[str, ...]]]] = {
    PROJECT_MANAGERS: [
        ("annotation", ("add_", "change_", "delete_", "view_")),
        ("evaluation", ("add_", "change_", "view_")),
        ("auth", ("view_user",)),
    ],
    RESEARCHERS: [
        ("annotation", ("view_",)),
        ("evaluation", ("view_",)),
    ],
}


def _ensure_permission_rows(apps) -> None:
    """Create the default permissions now: inside a migration they only appear post_migrate."""
    for label in {"annotation", "evaluation", "auth"}:
        try:
            app_config = apps.get_app_config(label)
        except LookupError:
            continue
        # A migration's app configs have no models module, and create_permissions skips those.
        missing = object()
        had_module = getattr(app_config, "models_module", missing)
        if not had_module or had_module is missing:
            app_config.models_module = True
        try:
            create_permissions(app_config, verbosity=0, apps=apps)
        finally:
            if had_module is missing:
                del app_config.models_module
            else:
                app_config.models_module = had_module


def roles_ensure(*, apps=None) -> dict[str, int]:
    """Create or update the role groups; returns the number of permissions per group.

    Idempotent. ``apps`` is a migration's historical registry; leave it out elsewhere.
    """
    apps = apps or global_apps
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    with transaction.atomic():
        _ensure_permission_rows(apps)
        counts = {}
        for role, rules in _ROLE_PERMISSIONS.items():
            group, _ = Group.objects.get_or_create(name=role)
            wanted = []
            for app_label, prefixes in rules:
                for perm in Permission.objects.filter(content_type__app_label=app_label):
                    if perm.codename.startswith(prefixes):
                        wanted.append(perm.pk)
            current = set(group.permissions.values_list("pk", flat=True))
            if current != set(wanted):
                group.permissions.set(wanted)
            counts[role] = len(wanted)
        return counts


def role_grant(*, user, role: str) -> None:
    """Put ``user`` in ``role``. Both roles read the admin, so the user becomes staff. Idempotent."""
    if role not in ROLES:
        raise ValueError(f"Unknown role {role!r}.")
    from django.contrib.auth.models import Group

    with transaction.atomic():
        group = Group.objects.get(name=role)
        if not user.is_staff:
            user.is_staff = True
            user.save(update_fields=["is_staff"])
        user.groups.add(group)
