"""The read-only "Language statistics" page: per language, Table 1 and Table 2, and the side-by-side
campaigns with their ΔS×S."""

from __future__ import annotations

from django.contrib import admin
from django.template.response import TemplateResponse

from evaluation.admin.pages import ReadOnlyPageAdmin
from evaluation.admin.results import language_statistics_tables
from evaluation.human.selectors import language_tables, sxs_table_rows
from evaluation.models import LanguageStatistics


@admin.register(LanguageStatistics)
class LanguageStatisticsAdmin(ReadOnlyPageAdmin):
    """One read-only page: per language, Table 1 (captions) and Table 2 (quality), and the
    side-by-side campaigns with their ΔS×S."""

    def page_view(self, request, extra_context=None):
        context = {
            **self.admin_site.each_context(request),
            "title": "Language statistics",
            "opts": self.opts,
            "media": self.media,
            **language_statistics_tables(language_tables(), sxs_table_rows()),
            **(extra_context or {}),
        }
        return TemplateResponse(request, "admin/evaluation/languagestatistics/change_list.html", context)
