"""The base of the admin's read-only pages (language statistics, annotator hours)."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import HttpResponseRedirect
from django.urls import reverse

from core.admin import ReadOnlyAdminMixin, StyledModelAdmin


class ReadOnlyPageAdmin(ReadOnlyAdminMixin, StyledModelAdmin):
    """A page of figures behind a proxy model with no table of its own: nothing can be added, changed
    or deleted through it, and only a user who may view the model sees ``page_view``."""

    def changelist_view(self, request, extra_context=None):
        if not self.has_view_permission(request):
            raise PermissionDenied
        return self.page_view(request, extra_context)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        """There is no object to change: back to the page."""
        return HttpResponseRedirect(reverse(f"admin:{self.opts.app_label}_{self.opts.model_name}_changelist"))

    def page_view(self, request, extra_context=None):
        raise NotImplementedError
