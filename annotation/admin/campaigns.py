"""Admin of campaigns and of the work done in them (batches, written captions: read-only)."""

from __future__ import annotations

from django.contrib import admin, messages
from django.utils.text import Truncator

from annotation.admin.common import StyledModelAdmin, count_of, run_service
from annotation.admin.progress import campaign_panel
from annotation.assignment.engine import leases_expire
from annotation.models import (
    OPEN_BATCH_STAGES,
    Assignment,
    Batch,
    Campaign,
    CampaignState,
    Item,
    WrittenCaption,
)
from annotation.services.campaigns import campaign_close, campaign_open


@admin.register(Campaign)
class CampaignAdmin(StyledModelAdmin):
    list_display = [
        "name",
        "kind",
        "language",
        "state",
        "batch_size",
        "replication",
        "progress",
        "created_at",
    ]
    list_select_related = ["language"]
    list_filter = ["state", "kind", "language"]
    search_fields = ["name"]
    actions = ["open_campaigns", "close_campaigns", "expire_stale_leases"]
    fieldsets = [
        (None, {"fields": ["name", "kind", "language", "state", "prompt_system"]}),
        ("Work", {"fields": ["batch_size", "replication", "lease_minutes"]}),
        ("Guidelines", {"classes": ["collapse"], "fields": ["rating_guidelines", "writing_guidelines"]}),
    ]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(
                n_items=count_of(Item, "campaign"),
                n_captions=count_of(WrittenCaption, "campaign"),
                n_live=count_of(Batch, "campaign", stage__in=OPEN_BATCH_STAGES),
            )
        )

    def get_readonly_fields(self, request, obj=None):
        # The state changes only through the open/close actions (they add the items);
        # what an opened campaign asks of annotators must not change under their feet.
        if obj is None or obj.state == CampaignState.DRAFT:
            return ["state"]
        return ["state", "kind", "language", "prompt_system", "replication"]

    def get_actions(self, request):
        actions = super().get_actions(request)
        # Bulk delete would bypass the per-object rule below.
        actions.pop("delete_selected", None)
        return actions

    def has_delete_permission(self, request, obj=None):
        # Only a campaign that was never opened can go: opened ones carry annotators' work.
        if obj is not None and obj.state != CampaignState.DRAFT:
            return False
        return super().has_delete_permission(request, obj)

    @admin.display(description="progress")
    def progress(self, obj):
        target = obj.n_items * obj.replication
        percent = f" ({round(100 * obj.n_captions / target)}%)" if target else ""
        live = f" · {obj.n_live} live batch{'es' if obj.n_live != 1 else ''}" if obj.n_live else ""
        return f"{obj.n_captions} / {target} captions{percent} · {obj.n_items} images{live}"

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None and obj.pk:
            context["progress"] = campaign_panel(obj)
        return super().render_change_form(
            request, context, add=add, change=change, form_url=form_url, obj=obj
        )

    @admin.action(description="Open selected campaigns", permissions=["change"])
    def open_campaigns(self, request, queryset):
        opened = []
        for campaign in queryset.order_by("name"):
            if run_service(self, request, campaign_open, campaign_id=campaign.pk) is not None:
                opened.append(campaign.name)
        if opened:
            self.message_user(request, f"Opened: {', '.join(opened)}.", level=messages.SUCCESS)

    @admin.action(description="Close selected campaigns", permissions=["change"])
    def close_campaigns(self, request, queryset):
        closed = []
        for campaign in queryset.order_by("name"):
            if run_service(self, request, campaign_close, campaign_id=campaign.pk) is not None:
                closed.append(campaign.name)
        if closed:
            self.message_user(request, f"Closed: {', '.join(closed)}.", level=messages.SUCCESS)

    @admin.action(description="Expire stale leases now (all campaigns)", permissions=["change"])
    def expire_stale_leases(self, request, queryset):
        n = run_service(self, request, leases_expire)
        if n is not None:
            self.message_user(
                request,
                f"Expired {n} batch{'es' if n != 1 else ''} whose lease had run out; "
                "their unfinished images are back in the pool (drafts are kept).",
                level=messages.SUCCESS,
            )


class ReadOnlyAdminMixin:
    """Work records are written by annotators through the services, never edited here."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class AssignmentInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = Assignment
    fields = ["position_display", "image", "state", "rating_value", "caption"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("item__image", "rating", "written_caption")

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
    search_fields = ["=annotator__user__username", "=annotator__pseudonym"]
    show_full_result_count = False
    inlines = [AssignmentInline]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(n_images=count_of(Assignment, "batch"))

    @admin.display(description="images", ordering="n_images")
    def images(self, obj):
        return obj.n_images


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
