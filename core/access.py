"""Who is who: the roles, and the one set of predicates every page and API asks:
annotators reach neither the admin, the exports, the metrics nor the research API, and researchers read
but do not write campaigns.

Roles
- **Annotators** have an annotator profile (``user.annotator``). They reach the annotation pages
  and nothing else: never the admin, the research API, the report page or the exports.
- **Project managers** run campaigns in the admin: every model permission of the
  annotation app, and read access to user accounts so they can attach an annotator
  profile to one. Members must also be ``is_staff`` to reach the admin at all.
- **Researchers** read: view permissions only (annotation and evaluation), so the admin
  shows them campaigns, captions and progress but no form saves and no action runs.

Annotators belong to neither group and are never staff.

The rule for research outputs (API, schema and docs, /reports/, /exports/) is
:func:`can_read_research`: an active account in the Researchers or Project managers group, or an
active superuser; an annotator never, even one put in a group by mistake. Being staff is not a role:
a staff account without a group reads nothing. Pages use :func:`research_required` (anonymous
visitors go to the login page, others get 403); the API uses :class:`ResearchAccess` (401 without
credentials, 403 otherwise). The annotation app builds ``annotator_required`` on :func:`is_annotator`.

``roles_ensure`` is idempotent and sets each group's permissions to exactly the listed
ones, so re-running it also takes back a permission granted by hand. It works on the
live app registry (commands, tests) and on a migration's historical ``apps``.

This module imports neither ``annotation`` nor ``evaluation``: it reaches the annotator profile
through the ``annotator`` relation and the groups by name.
"""

from __future__ import annotations

from functools import wraps

from django.apps import apps as global_apps
from django.contrib.auth.decorators import login_required
from django.contrib.auth.management import create_permissions
from django.core.exceptions import ObjectDoesNotExist, PermissionDenied
from django.db import transaction
from django.utils.translation import gettext_lazy
from rest_framework.permissions import BasePermission

PROJECT_MANAGERS = "Project managers"
RESEARCHERS = "Researchers"
ROLES = (PROJECT_MANAGERS, RESEARCHERS)

# (app label, codename prefixes) per role; a prefix of "" would mean every permission.
_ROLE_PERMISSIONS: dict[str, list[tuple[str, tuple[str, ...]]]] = {
    PROJECT_MANAGERS: [
        ("annotation", ("add_", "change_", "delete_", "view_")),
        ("evaluation", ("add_", "change_", "view_")),
        ("challenges", ("add_", "change_", "delete_", "view_")),
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


# --- Predicates ---------------------------------------------------------------------------------------

_ROLE_CACHE = "_core_access_roles"


def _signed_in(user) -> bool:
    return user is not None and user.is_authenticated and user.is_active


def user_roles(user) -> frozenset[str]:
    """The role groups ``user`` belongs to; one query per request at most (kept on the user object)."""
    if not _signed_in(user):
        return frozenset()
    roles = getattr(user, _ROLE_CACHE, None)
    if roles is None:
        roles = frozenset(user.groups.filter(name__in=ROLES).values_list("name", flat=True))
        setattr(user, _ROLE_CACHE, roles)
    return roles


def is_annotator(user) -> bool:
    """An active account with an annotator profile (the backend loads it with the user: no query)."""
    if not _signed_in(user):
        return False
    try:
        return user.annotator is not None
    except ObjectDoesNotExist:
        return False


def is_project_manager(user) -> bool:
    return _signed_in(user) and not is_annotator(user) and PROJECT_MANAGERS in user_roles(user)


def is_researcher(user) -> bool:
    return _signed_in(user) and not is_annotator(user) and RESEARCHERS in user_roles(user)


def can_read_research(user) -> bool:
    """Researchers, project managers and superusers read research outputs; annotators never."""
    if not _signed_in(user):
        return False
    if user.is_superuser:
        return True
    return is_researcher(user) or is_project_manager(user)


def is_participant(user) -> bool:
    """A member of an evaluation-server team (reached through the ``challenge_teams`` relation by name:
    core imports no app). Participants see the benchmarks of their teams and nothing else."""
    if not _signed_in(user) or user.is_staff or is_annotator(user):
        return False  # staff and annotators are never participants: no query for them
    cached = getattr(user, "_core_access_participant", None)
    if cached is None:
        cached = user.challenge_teams.exists()
        user._core_access_participant = cached
    return cached


def can_host_benchmarks(user) -> bool:
    """Hosts of the evaluation server are the project managers (and superusers)."""
    return _signed_in(user) and (user.is_superuser or is_project_manager(user))


def can_start_metric_run(user) -> bool:
    """The research API's one write: the same people who read (researchers start their own runs)."""
    return can_read_research(user)


# --- Guards built on the predicates -------------------------------------------------------------------


def role_required(predicate, *, denied=None):
    """A view decorator: anonymous visitors go to the login page (``login_required``); a signed-in
    user for whom ``predicate(user)`` is false gets 403 (``PermissionDenied``, or ``denied(request)``)."""

    def decorator(view):
        @login_required
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            if not predicate(request.user):
                if denied is not None:
                    return denied(request)
                raise PermissionDenied
            return view(request, *args, **kwargs)

        return wrapper

    return decorator


research_required = role_required(can_read_research)


class ResearchAccess(BasePermission):
    """The research API, schema and docs: :func:`can_read_research` for reads,
    :func:`can_start_metric_run` for writes (only ``POST /api/metric-runs/`` accepts one)."""

    message = "The research API is for researchers and project managers."

    def has_permission(self, request, view) -> bool:
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return can_read_research(request.user)
        return can_start_metric_run(request.user)


# --- Where each role works -----------------------------------------------------------------------------
# (URL name, label, predicate): the areas of the platform. The home page sends a user to the first one
# that is theirs; the top bar links to every one that is theirs, and to nothing else.


def can_use_admin(user) -> bool:
    """Project managers (write) and researchers (read) work in the admin; superusers too."""
    return _signed_in(user) and user.is_staff and (user.is_superuser or bool(user_roles(user)))


AREAS = (
    ("annotation:dashboard", gettext_lazy("Work"), is_annotator),
    ("admin:index", gettext_lazy("Admin"), can_use_admin),
    ("research-home", gettext_lazy("Research"), can_read_research),
    ("challenges:home", gettext_lazy("Benchmarks"), is_participant),
)


def areas_for(user) -> list[tuple[str, str]]:
    """(URL name, label) of every area ``user`` may open, in the order of :data:`AREAS`."""
    return [(name, label) for name, label, allowed in AREAS if allowed(user)]


def home_for(user) -> str | None:
    """The URL name of the page a signed-in user lands on: the project manager's admin first (they also
    read research), then the annotator's work, then the researcher's home; None for an account with no role."""
    if is_project_manager(user) or (_signed_in(user) and user.is_superuser):
        return "admin:index"
    if is_annotator(user):
        return "annotation:dashboard"
    if can_read_research(user):
        return "research-home"
    if is_participant(user):
        return "challenges:home"
    return None
