"""Reference sets, image sets and the CLIP embedding cache in the admin."""

from __future__ import annotations

from django.contrib import admin

from annotation.admin.common import StyledModelAdmin, count_of
from evaluation.models import ClipEmbedding, ImageSet, Reference, ReferenceSet


@admin.register(ReferenceSet)
class ReferenceSetAdmin(StyledModelAdmin):
    list_display = ["name", "language", "kind", "campaign", "reference_count", "source_name", "updated_at"]
    list_filter = ["kind", "language"]
    search_fields = ["name", "source_name"]
    readonly_fields = ["source_name", "source_format", "source_sha256", "reference_count"]
    fields = ["name", "language", "kind", "campaign", "description", *readonly_fields]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("language", "campaign")
            .annotate(n_references=count_of(Reference, "reference_set"))
        )

    @admin.display(description="imported references", ordering="n_references")
    def reference_count(self, reference_set):
        return getattr(reference_set, "n_references", None) or reference_set.references.count()


@admin.register(ImageSet)
class ImageSetAdmin(StyledModelAdmin):
    list_display = ["name", "language", "image_count", "seed", "updated_at"]
    list_filter = ["language"]
    search_fields = ["name"]
    autocomplete_fields = ["images"]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("language")
            .annotate(n_images=count_of(ImageSet.images.through, "imageset"))
        )

    @admin.display(description="images", ordering="n_images")
    def image_count(self, image_set):
        return getattr(image_set, "n_images", None)


@admin.register(ClipEmbedding)
class ClipEmbeddingAdmin(StyledModelAdmin):
    list_display = ["model_id", "content_hash", "dim", "created_at"]
    list_filter = ["model_id"]
    search_fields = ["=content_hash"]
    fields = ["model_id", "content_hash", "dim", "created_at"]
    readonly_fields = fields

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
