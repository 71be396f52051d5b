"""Admin of workforce quality: adding rated control items to a campaign, reviewing flagged captions
(keep / exclude), image reports (withdraw the image, dismiss) and withdrawn images (extend to every
campaign, limit to their own, put back in the pool)."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.http import Http404
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.utils.text import Truncator

from annotation.admin.annotators import annotator_search
from annotation.models import Campaign, CampaignKind, CaptioningSystem
from annotation.quality.models import ImageReport, ImageWithdrawal, TypingRecord, TypingReview
from annotation.quality.reports import (
    image_reports_dismiss,
    image_reports_withdraw,
    image_restore,
    reports_to_review,
    withdrawals_extend,
    withdrawals_limit,
)
from annotation.quality.typing import typing_review
from annotation.services.controls import MAX_CONTROLS_PER_BATCH, campaign_controls_add
from core.admin import ReadOnlyAdminMixin, StyledModelAdmin, date_column, run_service, sortable_column
from core.errors import DomainError
from core.scales import SXS_CONTROL_MIN_JUDGMENTS


class CampaignControlsForm(forms.Form):
    mismatched = forms.IntegerField(
        min_value=0,
        initial=10,
        label="Caption-of-another-image controls",
        help_text="Each shows an image with the caption of another image; passes when rated BAD or MEDIUM.",
    )
    reference = forms.IntegerField(
        min_value=0,
        initial=0,
        label="Reference-caption controls",
        help_text="Each shows an image with a human reference caption; passes unless rated BAD.",
    )
    reference_system = forms.ModelChoiceField(
        queryset=CaptioningSystem.objects.all(),
        required=False,
        help_text="The system holding the human reference captions (English for a caption campaign's "
        "screen 1, the campaign language for a verification campaign).",
    )
    controls_per_batch = forms.IntegerField(
        min_value=1, max_value=MAX_CONTROLS_PER_BATCH, initial=1, help_text="Added to each batch's N images."
    )
    control_pass_threshold = forms.FloatField(
        min_value=0, max_value=1, initial=0.75, help_text="Annotators passing a smaller share are flagged."
    )
    control_min_judgments = forms.IntegerField(
        min_value=1,
        initial=SXS_CONTROL_MIN_JUDGMENTS,
        label="Minimum control ratings",
        help_text="An annotator is judged (and flagged) only from this many control ratings on.",
    )
    seed = forms.IntegerField(required=False, min_value=0, help_text="Empty: drawn at random.")


def campaign_controls_view(modeladmin: admin.ModelAdmin, request, object_id: str):
    """The "Add control items" page of a caption or verification campaign (change permission)."""
    campaign = Campaign.objects.filter(pk=object_id if str(object_id).isdigit() else None).first()
    if campaign is None or campaign.kind == CampaignKind.SIDE_BY_SIDE:
        raise Http404
    if not modeladmin.has_change_permission(request, campaign):
        raise PermissionDenied
    initial = {
        "control_pass_threshold": campaign.control_pass_threshold,
        "control_min_judgments": campaign.control_min_judgments,
        "controls_per_batch": campaign.controls_per_batch or 1,
    }
    form = CampaignControlsForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            with transaction.atomic():
                # The form's fields are the service's arguments, by the same names.
                items = campaign_controls_add(campaign_id=campaign.pk, **data)
        except DomainError as exc:
            form.add_error(None, exc.message)
        else:
            modeladmin.log_change(request, campaign, f"Added {len(items)} control items.")
            modeladmin.message_user(
                request,
                f"Added {len(items)} control items to “{campaign.name}”; "
                f"{data['controls_per_batch']} go into each new batch.",
                level=messages.SUCCESS,
            )
            return redirect("admin:annotation_campaign_change", campaign.pk)
    context = {
        **modeladmin.admin_site.each_context(request),
        "title": f"Add control items to “{campaign.name}”",
        "form": form,
        "opts": modeladmin.opts,
        "media": modeladmin.media + form.media,
        "submit_label": "Add control items",
    }
    return TemplateResponse(request, "admin/service_form.html", context)


@admin.register(TypingRecord)
class TypingRecordAdmin(StyledModelAdmin):
    """Captions whose typing was flagged on submit: the manager keeps or excludes each one."""

    list_display = [
        "caption",
        "flag_list",
        "review",
        "annotator",
        "page_record",
        "draft_saves",
    ]
    list_filter = ["review", "flags", "assignment__batch__campaign"]
    search_fields = annotator_search("assignment__annotator")
    list_select_related = [
        "assignment__written_caption",
        "assignment__draft",
        "assignment__annotator__user",
        "assignment__batch__campaign",
    ]
    actions = ["keep_captions", "exclude_captions"]
    show_full_result_count = False

    def get_queryset(self, request):
        return super().get_queryset(request).filter(assignment__written_caption__isnull=False)

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in self.model._meta.fields]

    @admin.display(description="caption")
    def caption(self, obj):
        return Truncator(obj.assignment.written_caption.text).chars(80)

    @admin.display(description="annotator")
    def annotator(self, obj):
        return obj.assignment.annotator

    @admin.display(description="page's record")
    def page_record(self, obj):
        """What the page reported, in one column so that the caption keeps its room."""
        return (
            f"{obj.keystrokes} keys for {obj.chars} chars, {obj.pasted_chars} pasted, {self.typing_time(obj)}"
        )

    @admin.display(description="first to last key")
    def typing_time(self, obj):
        seconds = obj.typing_seconds
        if seconds is None:
            return "–"
        rate = f", {obj.chars / seconds:.1f} chars/s" if seconds > 0 else ""
        return f"{seconds:.1f} s{rate}"

    @admin.display(description="draft saves")
    def draft_saves(self, obj):
        """How the caption reached the server: its saves and the most characters one save added."""
        draft = getattr(obj.assignment, "draft", None)
        if draft is None:
            return "none"
        saves = draft.saves or []
        if not saves:
            return "not recorded"
        lengths = [0 if draft.saves_dropped == 0 else saves[0][1]] + [n for _, n in saves]
        largest = max(b - a for a, b in zip(lengths, lengths[1:], strict=False))
        n = len(saves) + draft.saves_dropped
        return f"{n} save{'s' if n != 1 else ''}, at most +{max(largest, 0)} chars at once"

    @admin.display(description="flags", ordering="flags")
    def flag_list(self, obj):
        return obj.flags.replace(",", ", ")

    def _review(self, request, queryset, decision: str):
        n = run_service(
            self,
            request,
            typing_review,
            record_ids=queryset.values_list("pk", flat=True),
            decision=decision,
            user=request.user,
        )
        if n is not None:
            self.message_user(request, f"{n} flagged caption(s) marked {decision}.", level=messages.SUCCESS)

    @admin.action(description="Keep the selected flagged captions", permissions=["change"])
    def keep_captions(self, request, queryset):
        self._review(request, queryset, TypingReview.KEPT)

    @admin.action(
        description="Exclude the selected flagged captions from exports and metric runs",
        permissions=["change"],
    )
    def exclude_captions(self, request, queryset):
        self._review(request, queryset, TypingReview.EXCLUDED)


class ReportStateFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"

    def lookups(self, request, model_admin):
        return [("review", "to review (reporter not trusted)"), ("open", "open"), ("resolved", "resolved")]

    def queryset(self, request, queryset):
        if self.value() == "review":
            return queryset.filter(pk__in=reports_to_review().values("pk"))
        if self.value() in ("open", "resolved"):
            return queryset.filter(resolved=self.value() == "resolved")
        return queryset


@admin.register(ImageReport)
class ImageReportAdmin(ReadOnlyAdminMixin, StyledModelAdmin):
    """Every report with its reporter (as participants are named elsewhere: account and pseudonym),
    campaign, reason, time and whether it counted; the manager withdraws the image or dismisses the
    reports. Reports of reporters not trusted (annotation.quality.reports.reporter_trusted) never
    withdraw an image by themselves: they wait here."""

    # Narrow enough to show whole beside the admin's navigation and filters: the note is on each
    # report's own page.
    list_display = ["image", "campaign", "reporter", "reason_code", "reported", "counts", "state"]
    list_filter = [ReportStateFilter, "trusted", "reason", "campaign"]
    list_select_related = ["image", "annotator__user", "campaign"]
    search_fields = ["=image__key", *annotator_search()]
    actions = ["withdraw_here", "withdraw_everywhere", "dismiss_reports"]

    def has_decide_permission(self, request):
        return request.user.has_perm("annotation.add_imagewithdrawal")

    def get_queryset(self, request):
        in_force = ImageWithdrawal.objects.filter(image_id=OuterRef("image_id")).filter(
            Q(campaign_id=OuterRef("campaign_id")) | Q(everywhere=True)
        )
        return (
            super()
            .get_queryset(request)
            .annotate(
                withdrawn_here=Exists(in_force), withdrawn_everywhere=Exists(in_force.filter(everywhere=True))
            )
        )

    @admin.display(description="reporter", ordering="annotator__user__username")
    def reporter(self, obj):
        return f"{obj.annotator} ({obj.annotator.pseudonym})"

    reason_code = sortable_column("reason", "reason")
    reported = date_column("created_at", "reported", "SHORT_DATETIME_FORMAT")

    @admin.display(description="counts", ordering="trusted")
    def counts(self, obj):
        """Whether the report counted toward a withdrawal (its reporter was trusted)."""
        return "yes" if obj.trusted else "review only"

    @admin.display(description="state")
    def state(self, obj):
        if obj.withdrawn_everywhere:
            return "withdrawn everywhere"
        if obj.withdrawn_here:
            return "withdrawn here"
        return "resolved" if obj.resolved else "open"

    def _decide(self, request, queryset, service, done: str, **kwargs):
        n = run_service(
            self, request, service, report_ids=list(queryset.values_list("pk", flat=True)), **kwargs
        )
        if n is not None:
            self.message_user(request, done.format(n=n), level=messages.SUCCESS)

    @admin.action(
        description="Withdraw the images from the campaigns where they were reported", permissions=["decide"]
    )
    def withdraw_here(self, request, queryset):
        self._decide(
            request,
            queryset,
            image_reports_withdraw,
            "{n} image(s) withdrawn from the campaign where they were reported.",
            everywhere=False,
            user=request.user,
        )

    @admin.action(description="Withdraw the images from every campaign", permissions=["decide"])
    def withdraw_everywhere(self, request, queryset):
        self._decide(
            request,
            queryset,
            image_reports_withdraw,
            "{n} image(s) withdrawn from every campaign.",
            everywhere=True,
            user=request.user,
        )

    @admin.action(
        description="Dismiss the selected reports (nothing wrong with the image)", permissions=["decide"]
    )
    def dismiss_reports(self, request, queryset):
        self._decide(request, queryset, image_reports_dismiss, "{n} report(s) dismissed.")


@admin.register(ImageWithdrawal)
class ImageWithdrawalAdmin(ReadOnlyAdminMixin, StyledModelAdmin):
    list_display = ["image", "scope", "campaign", "reports", "reasons", "withdrawn_by", "created_at"]
    list_filter = ["everywhere", "campaign"]
    list_select_related = ["image", "campaign", "withdrawn_by"]
    search_fields = ["=image__key"]
    actions = ["extend_everywhere", "limit_to_campaign", "restore_images"]

    @admin.display(description="withdrawn from", ordering="everywhere")
    def scope(self, obj):
        return "every campaign" if obj.everywhere else "its campaign only"

    @admin.display(description="reasons")
    def reasons(self, obj):
        reports = ImageReport.objects.filter(image=obj.image, resolved=False)
        if not obj.everywhere:
            reports = reports.filter(campaign_id=obj.campaign_id)
        return ", ".join(sorted(set(reports.values_list("reason", flat=True))))

    @admin.action(description="Extend to every campaign", permissions=["scope"])
    def extend_everywhere(self, request, queryset):
        n = run_service(
            self,
            request,
            withdrawals_extend,
            withdrawal_ids=queryset.values_list("pk", flat=True),
            user=request.user,
        )
        if n is not None:
            self.message_user(
                request, f"{n} image(s) now withdrawn from every campaign.", level=messages.SUCCESS
            )

    @admin.action(description="Limit to the campaign where they were reported", permissions=["scope"])
    def limit_to_campaign(self, request, queryset):
        n = run_service(
            self, request, withdrawals_limit, withdrawal_ids=queryset.values_list("pk", flat=True)
        )
        if n is not None:
            self.message_user(
                request,
                f"{n} image(s) back in every other campaign's pool, still withdrawn where they were reported.",
                level=messages.SUCCESS,
            )

    @admin.action(description="Put the selected images back in the pool", permissions=["restore"])
    def restore_images(self, request, queryset):
        n = run_service(self, request, image_restore, withdrawal_ids=queryset.values_list("pk", flat=True))
        if n is not None:
            self.message_user(request, f"{n} image(s) back in the pool.", level=messages.SUCCESS)

    def has_scope_permission(self, request):
        return request.user.has_perm("annotation.change_imagewithdrawal")

    def has_restore_permission(self, request):
        return request.user.has_perm("annotation.delete_imagewithdrawal")
