"""The read-only "Language statistics" page: per language, Table 1 and Table 2, and the side-by-side
campaigns with their ΔS×S."""

from __future__ import annotations

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse

from core.admin import ReadOnlyAdminMixin, StyledModelAdmin
from evaluation.admin.results import language_statistics_tables
from evaluation.human.selectors import language_tables, sxs_table_rows
from evaluation.models import LanguageStatistics


@admin.register(LanguageStatistics)
class LanguageStatisticsAdmin(ReadOnlyAdminMixin, StyledModelAdmin):
    """One read-only page: per language, Table 1 (captions) and Table 2 (quality), and the
    side-by-side campaigns with their ΔS×S."""

    def changelist_view(self, request, extra_context=None):
        if not self.has_view_permission(request):
            raise PermissionDenied
        context = {
            **self.admin_site.each_context(request),
            "title": "Language statistics",
            "opts": self.opts,
            "media": self.media,
            **language_statistics_tables(language_tables(), sxs_table_rows()),
            **(extra_context or {}),
        }
        return TemplateResponse(request, "admin/evaluation/languagestatistics/change_list.html", context)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        return HttpResponseRedirect(reverse("admin:evaluation_languagestatistics_changelist"))
