"""Stored reports (:mod:`evaluation.research.reports.cache`): what has been computed, how long it took,
what is computing. Read-only; deleting rows is safe (the next visit computes them again)."""

from __future__ import annotations

from django.contrib import admin

from core.admin import StyledModelAdmin
from evaluation.models import ReportCache, ReportPiece


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


@admin.register(ReportPiece)
class ReportPieceAdmin(StyledModelAdmin):
    """One language's part of the reports' trust tables, kept so that a change in one language recomputes
    only it and the pooled column; removed after 30 days unread. Read-only; deleting is safe."""

    list_display = ["key", "language", "created_at", "updated_at"]
    list_filter = ["language"]
    fields = ["key", "language", "created_at", "updated_at"]
    readonly_fields = fields

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
