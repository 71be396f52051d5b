"""Recruitment pages with crowd ids or admission secrets are for project managers (and superusers) only."""

from __future__ import annotations

from core.access import is_project_manager
from core.admin import StyledModelAdmin


def managers_only(user) -> bool:
    return user.is_active and (user.is_superuser or is_project_manager(user))


class ManagersOnlyAdmin(StyledModelAdmin):
    """Pages with crowd ids or admission secrets: project managers (and superusers) only."""

    def has_module_permission(self, request):
        return managers_only(request.user) and super().has_module_permission(request)

    def has_view_permission(self, request, obj=None):
        return managers_only(request.user) and super().has_view_permission(request, obj)
