"""The work done in campaigns, read-only in the admin: batches with their assignments, and written captions
(services write them; nobody edits them here)."""

from __future__ import annotations

from django.contrib import admin
from django.utils.text import Truncator

from annotation.admin.annotators import annotator_search
from annotation.models import (
    Assignment,
    Batch,
    WrittenCaption,
)
from core.admin import ReadOnlyAdminMixin, StyledModelAdmin, count_of, sortable_column


class AssignmentInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = Assignment
    fields = ["position_display", "image", "state", "rating_value", "caption", "judgment"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("item__image", "rating", "written_caption", "sxs_judgment")
        )

    @admin.display(description="side by side")
    def judgment(self, obj):
        judgment = getattr(obj, "sxs_judgment", None)
        if judgment is None:
            return "–"
        return f"{judgment.get_choice_display()} (m2 on the {obj.m2_side}; score {judgment.score:+d})"

    @admin.display(description="#")
    def position_display(self, obj):
        return obj.position + 1

    @admin.display(description="image")
    def image(self, obj):
        return obj.item.image.key

    @admin.display(description="rating")
    def rating_value(self, obj):
        rating = getattr(obj, "rating", None)
        return rating.get_value_display() if rating else "–"

    @admin.display(description="written caption")
    def caption(self, obj):
        caption = getattr(obj, "written_caption", None)
        return caption.text if caption else "–"


@admin.register(Batch)
class BatchAdmin(ReadOnlyAdminMixin, StyledModelAdmin):
    list_display = [
        "id",
        "campaign",
        "annotator",
        "stage",
        "images",
        "created_at",
        "lease_expires_at",
        "submitted_at",
        "is_late",
    ]
    list_select_related = ["campaign", "annotator__user"]
    list_filter = ["stage", "is_late", "campaign"]
    search_fields = annotator_search()
    show_full_result_count = False
    inlines = [AssignmentInline]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(n_images=count_of(Assignment, "batch"))

    images = sortable_column("n_images", "images")


@admin.register(WrittenCaption)
class WrittenCaptionAdmin(ReadOnlyAdminMixin, StyledModelAdmin):
    list_display = ["image", "language", "annotator", "text_short", "is_late", "campaign", "created_at"]
    list_select_related = ["image", "language", "annotator__user", "campaign"]
    list_filter = ["language", "is_late", "campaign"]
    search_fields = ["=image__key", "=annotator__user__username", "text"]
    raw_id_fields = ["assignment", "image"]
    show_full_result_count = False

    @admin.display(description="text")
    def text_short(self, obj):
        return Truncator(obj.text).chars(120)
