"""Who may use the research API (RELIABILITY 15).

The API has readers and one write, starting a metric run. Both roles may do both: researchers read
and start metric runs (the issue gives them that endpoint); project managers hold every researcher
right. Superusers too. Annotators and every other account get 403; requests without credentials 401.
"""

from __future__ import annotations

from rest_framework.permissions import BasePermission

from core.access import ROLES

_CACHE_ATTRIBUTE = "_research_api_allowed"


def is_research_staff(user) -> bool:
    """Active superusers and members of the "Researchers" or "Project managers" groups.

    One query per request at most (the answer is kept on the user object of the request).
    """
    if user is None or not user.is_authenticated or not user.is_active:
        return False
    if user.is_superuser:
        return True
    allowed = getattr(user, _CACHE_ATTRIBUTE, None)
    if allowed is None:
        allowed = user.groups.filter(name__in=ROLES).exists()
        setattr(user, _CACHE_ATTRIBUTE, allowed)
    return allowed


class IsResearchStaff(BasePermission):
    """Reads and the metric-run write: researchers, project managers, superusers."""

    message = "The research API is for researchers and project managers."

    def has_permission(self, request, view) -> bool:
        return is_research_staff(request.user)
