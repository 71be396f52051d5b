"""Admin of campaigns (the work done in them: ``annotation.admin.batches``).

Every kind is created through its service: caption campaigns on the add page (with their image
selection and "Open it now"), side-by-side and verification campaigns, whose items are fixed when
they are created, on their own add pages (``add-side-by-side/``, ``add-verification/``).
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.shortcuts import redirect
from django.urls import reverse

from annotation.admin.campaign_forms import (
    KEY_SEPARATORS,
    CampaignGuidelinesForm,
    CaptionCampaignForm,
    SxsCampaignForm,
    VerificationCampaignForm,
)
from annotation.admin.panels import campaign_panels
from annotation.admin.progress import campaign_panel
from annotation.admin.quality import campaign_controls_view
from annotation.assignment.engine import leases_expire
from annotation.models import (
    CAPPED_KINDS,
    DONE_STATES,
    OPEN_BATCH_STAGES,
    Assignment,
    Batch,
    Campaign,
    CampaignGuidelines,
    CampaignKind,
    CampaignState,
    Item,
    SelectedLanguage,
    WrittenCaption,
)
from annotation.selectors import selected_keys
from annotation.services.campaigns import (
    campaign_close,
    campaign_open,
    caption_campaign_create,
    rating_campaign_create,
    sxs_campaign_create,
)
from core.admin import (
    StyledModelAdmin,
    admin_page,
    count_of,
    date_column,
    run_service,
    run_service_each,
    service_form_view,
    sortable_column,
)


class CampaignGuidelinesInline(admin.StackedInline):
    """The campaign's guidelines in one interface language each (annotation.guidelines picks them):
    an empty text falls back to the campaign's own text, then to the built-in one in that language."""

    model = CampaignGuidelines
    form = CampaignGuidelinesForm
    extra = 0
    classes = ["collapse"]


@admin.register(Campaign)
class CampaignAdmin(StyledModelAdmin):
    inlines = [CampaignGuidelinesInline]
    list_display = [
        "name",
        "kind",
        "language",
        "state",
        "batch_n",
        "replication_k",
        "progress",
        "created",
    ]
    list_select_related = ["language"]
    list_filter = ["state", "kind", "language"]
    search_fields = ["name"]
    actions = ["open_campaigns", "close_campaigns", "expire_stale_leases", "verify_captions"]
    change_list_template = "admin/annotation/campaign/change_list.html"
    work_fieldset = ("Work", {"fields": ["batch_size", "replication", "lease_minutes"]})
    # annotation.caption_checks; defaults and their measured figures in docs/protocol.md.
    checks_fieldset = (
        "Caption checks",
        {
            "fields": [
                "min_caption_length",
                "language_check",
                "language_check_threshold",
                "near_copy_threshold",
            ]
        },
    )
    fieldsets = [
        (None, {"fields": ["name", "kind", "language", "state", "prompt_system", "fixed_images"]}),
        work_fieldset,
        checks_fieldset,
        ("Guidelines", {"classes": ["collapse"], "fields": ["rating_guidelines", "writing_guidelines"]}),
    ]
    add_fieldsets = [
        (None, {"fields": ["name", "language", "prompt_system"]}),
        work_fieldset,
        checks_fieldset,
        ("Guidelines", {"classes": ["collapse"], "fields": ["rating_guidelines", "writing_guidelines"]}),
    ]
    sxs_fieldsets = [
        (None, {"fields": ["name", "kind", "language", "state"]}),
        (
            "Side by side",
            {
                "fields": [
                    "base_system",
                    "test_system",
                    "sample_size",
                    "sample_seed",
                    "control_pass_threshold",
                    "control_min_judgments",
                ]
            },
        ),
        work_fieldset,
        ("Guidelines", {"classes": ["collapse"], "fields": ["sxs_guidelines"]}),
    ]
    rating_fieldsets = [
        (None, {"fields": ["name", "kind", "language", "state"]}),
        ("Verification", {"fields": ["source_campaign", "sample_size", "sample_seed"]}),
        work_fieldset,
        ("Guidelines", {"classes": ["collapse"], "fields": ["rating_guidelines"]}),
    ]
    # Fixed when a side-by-side or verification campaign is created: its items depend on them.
    created_with = [
        "kind",
        "language",
        "base_system",
        "test_system",
        "sample_size",
        "sample_seed",
        "source_campaign",
    ]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(
                n_items=count_of(Item, "campaign", control_kind__in=CAPPED_KINDS),
                n_captions=count_of(WrittenCaption, "campaign"),
                n_done=count_of(
                    Assignment, "batch__campaign", state__in=DONE_STATES, item__control_kind__in=CAPPED_KINDS
                ),
                n_live=count_of(Batch, "campaign", stage__in=OPEN_BATCH_STAGES),
            )
        )

    def get_fieldsets(self, request, obj=None):
        if obj is not None and obj.kind == CampaignKind.SIDE_BY_SIDE:
            return self.sxs_fieldsets
        if obj is not None and obj.kind == CampaignKind.RATING:
            return self.rating_fieldsets
        return self.fieldsets

    def get_readonly_fields(self, request, obj=None):
        # The state changes only through the open/close actions (they add the items);
        # what an opened campaign asks of annotators must not change under their feet.
        if obj is None:
            return ["state"]
        # The kind is chosen by the add page that created the campaign: each kind has its own fields.
        fixed = ["state", "kind", "fixed_images"]
        if obj.kind != CampaignKind.CAPTION:
            fixed += self.created_with
        elif obj.fixed_images:
            # Its items were made with the prompt system's captions of the chosen images.
            fixed += ["language", "prompt_system"]
        if obj.state == CampaignState.DRAFT:
            return fixed
        return list(dict.fromkeys([*fixed, "kind", "language", "prompt_system", "replication"]))

    # --- Creating campaigns: every kind through its service ------------------------------------

    def add_view(self, request, form_url="", extra_context=None):
        def create(data):
            return caption_campaign_create(
                name=data["name"],
                language_code=data["language"].code,
                prompt_system=data["prompt_system"],
                batch_size=data["batch_size"],
                replication=data["replication"],
                lease_minutes=data["lease_minutes"],
                image_keys=KEY_SEPARATORS.split(data["image_keys"]) if data["images"] == "keys" else None,
                images_of_campaign_id=data["images_of"].pk if data["images"] == "campaign" else None,
                rating_guidelines=data.get("rating_guidelines") or "",
                writing_guidelines=data.get("writing_guidelines") or "",
            )

        return self._create_view(
            request, CaptionCampaignForm, create, "Add caption campaign", initial=_from_selection(request)
        )

    def get_urls(self):
        def controls(request, object_id):
            return campaign_controls_view(self, request, object_id)

        return [
            admin_page(self, "add-side-by-side/", self.add_sxs_view, "add_sxs"),
            admin_page(self, "<path:object_id>/add-controls/", controls, "add_controls"),
            admin_page(self, "add-verification/", self.add_verification_view, "add_verification"),
            *super().get_urls(),
        ]

    def add_sxs_view(self, request):
        def create(data):
            return sxs_campaign_create(
                name=data["name"],
                language_code=data["language"].code,
                base_system=data["base_system"],
                test_system=data["test_system"],
                sample_size=data.get("sample_size"),
                seed=data.get("seed"),
                batch_size=data["batch_size"],
                replication=data["replication"],
                controls_identical=data["controls_identical"],
                controls_wrong_image=data["controls_wrong_image"],
                control_pass_threshold=data["control_pass_threshold"],
                control_min_judgments=data["control_min_judgments"],
            )

        return self._create_view(request, SxsCampaignForm, create, "Add side-by-side campaign")

    def add_verification_view(self, request):
        def create(data):
            return rating_campaign_create(
                name=data["name"],
                source_campaign_id=data["source_campaign"].pk,
                sample_size=data.get("sample_size"),
                seed=data.get("seed"),
                batch_size=data["batch_size"],
                replication=data["replication"],
            )

        initial = {}
        source = request.GET.get("source")
        if source and source.isdigit():
            initial["source_campaign"] = int(source)
            name = Campaign.objects.filter(pk=int(source)).values_list("name", flat=True).first()
            if name:
                initial["name"] = f"Verification of {name}"[:200]
        return self._create_view(
            request, VerificationCampaignForm, create, "Add verification campaign", initial=initial
        )

    def _create_view(self, request, form_class, create, title, initial=None):
        def create_and_open(data):
            campaign = create(data)
            if data.get("open_now"):
                campaign = campaign_open(campaign_id=campaign.pk)
            return campaign

        def done(campaign):
            items = campaign.items.count()
            controls = campaign.items.filter(is_control=True).count()
            text = f"Created “{campaign.name}” ({campaign.get_state_display()}): {items} items" + (
                f", of which {controls} controls" if controls else ""
            )
            if campaign.sample_seed is not None:
                text += f"; random seed {campaign.sample_seed}"
            if campaign.state == CampaignState.DRAFT:
                text += ". It is a draft: annotators see it once you open it (“Open selected campaigns”)"
            return text + "."

        return service_form_view(
            self,
            request,
            form_class=form_class,
            create=create_and_open,
            title=title,
            done=done,
            initial=initial,
        )

    def changelist_view(self, request, extra_context=None):
        extra_context = {**(extra_context or {}), "can_add_campaign": self.has_add_permission(request)}
        return super().changelist_view(request, extra_context)

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

    # The paper's letters keep the columns narrow (the list fits 1366 px with the sidebar open).
    batch_n = sortable_column("batch_size", "N")
    replication_k = sortable_column("replication", "K")
    # The date alone: "Nov. 23, 2026, 10:31 a.m." was clipped at 1366 px; the time is on the page.
    created = date_column("created_at", "created", "Y-m-d")

    @admin.display(description="progress")
    def progress(self, obj):
        target = obj.n_items * obj.replication
        if obj.kind == CampaignKind.CAPTION:
            done, noun = obj.n_captions, "captions"
        else:
            done, noun = obj.n_done, ("judgments" if obj.kind == CampaignKind.SIDE_BY_SIDE else "ratings")
        percent = f" ({round(100 * done / target)}%)" if target else ""
        live = f" · {obj.n_live} live batch{'es' if obj.n_live != 1 else ''}" if obj.n_live else ""
        return f"{done} / {target} {noun}{percent} · {obj.n_items} images{live}"

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None and obj.pk:
            context["progress"] = campaign_panel(obj)
            context["result_panels"] = campaign_panels(obj)
        return super().render_change_form(
            request, context, add=add, change=change, form_url=form_url, obj=obj
        )

    def _each_campaign(self, request, queryset, service, done: str) -> None:
        opened = run_service_each(
            self, request, service, queryset.order_by("name"), lambda campaign: {"campaign_id": campaign.pk}
        )
        if opened:
            names = ", ".join(campaign.name for campaign in opened)
            self.message_user(request, f"{done}: {names}.", level=messages.SUCCESS)

    @admin.action(description="Open selected campaigns", permissions=["change"])
    def open_campaigns(self, request, queryset):
        self._each_campaign(request, queryset, campaign_open, "Opened")

    @admin.action(description="Close selected campaigns", permissions=["change"])
    def close_campaigns(self, request, queryset):
        self._each_campaign(request, queryset, campaign_close, "Closed")

    @admin.action(
        description="Verify captions: new verification campaign from the selected caption campaign",
        permissions=["add"],
    )
    def verify_captions(self, request, queryset):
        campaigns = list(queryset.filter(kind=CampaignKind.CAPTION)[:2])
        if len(campaigns) != 1:
            self.message_user(request, "Select exactly one caption campaign.", level=messages.ERROR)
            return None
        url = reverse("admin:annotation_campaign_add_verification")
        return redirect(f"{url}?source={campaigns[0].pk}")

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


def _from_selection(request) -> dict | None:
    """The caption campaign form filled with one language's image set of a selection
    (``?from_selection=<id>``, the link of the selection's level table)."""
    pk = request.GET.get("from_selection", "") if request.method == "GET" else ""
    if not pk.isdigit():
        return None
    language_set = SelectedLanguage.objects.select_related("selection", "language").filter(pk=pk).first()
    if language_set is None:
        return None
    return {
        "name": f"{language_set.selection.name} {language_set.language.code}",
        "language": language_set.language,
        "images": "keys",
        "image_keys": "\n".join(selected_keys(language_set_id=language_set.pk)),
    }
