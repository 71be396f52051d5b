"""Stored reports (:mod:`evaluation.research.reports.cache`): what has been computed, how long it took,
what is computing. Read-only; deleting rows is safe (the next visit computes them again)."""

from __future__ import annotations

from django.contrib import admin

from core.admin import StyledModelAdmin
from evaluation.models import ReportCache


@admin.register(ReportCache)
class ReportCacheAdmin(StyledModelAdmin):
    list_display = ["id", "kind", "state", "seconds", "progress", "created_at", "updated_at"]
    list_filter = ["kind", "state"]
    fields = ["kind", "state", "progress", "error", "seconds", "selection", "key", "created_at", "updated_at"]
    readonly_fields = fields

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
