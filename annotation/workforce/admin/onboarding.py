"""Onboarding and pilot settings per campaign, the tutorial's gold items (a warning whenever a constant
answer would pass them), tutorial results and written answers to check, and pilot reviews."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q
from django.http import Http404
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from annotation.models import (
    Campaign,
    CampaignKind,
    CampaignOnboarding,
    CaptionReview,
    ReviewDecision,
    TutorialAnswer,
    TutorialItem,
    TutorialResult,
)
from annotation.workforce import selectors, services
from core.admin import ConditionFilter, ReadOnlyAdminMixin, StyledModelAdmin, admin_page, run_service_each
from core.errors import DomainError
from core.scales import RATING, SXS


def constant_pass_warning(campaign: Campaign, threshold: float | None = None) -> str | None:
    """Why a constant answer passes ``campaign``'s gold set (at ``threshold``, else the stored one), or
    None when none does."""
    passes = selectors.gold_set_constant_passes(campaign, threshold)
    if not passes:
        return None
    scale = SXS if campaign.kind == CampaignKind.SIDE_BY_SIDE else RATING
    answers = " or ".join(f"{scale.by_code(p.answer).label} ({p.correct} of {p.total} right)" for p in passes)
    return (
        f"A constant answer passes this tutorial: answering {answers} to every gold item reaches the "
        "threshold. Add gold items whose expected answers lie further apart on the scale, or raise the "
        "threshold."
    )


class OnboardingForm(forms.ModelForm):
    class Meta:
        model = CampaignOnboarding
        fields = [
            "campaign",
            "tutorial_enabled",
            "pass_threshold",
            "tutorial_intro",
            "review_hours",
            "is_pilot",
            "main_campaign",
        ]

    def clean(self):
        data = super().clean()
        campaign, main = data.get("campaign"), data.get("main_campaign")
        if main is not None and not data.get("is_pilot"):
            self.add_error("main_campaign", "Only a pilot prepares a main campaign: tick “pilot”.")
        if main is not None and campaign is not None and main.pk == campaign.pk:
            self.add_error("main_campaign", "A pilot cannot be its own main campaign.")
        threshold = data.get("pass_threshold")
        if campaign is not None and data.get("tutorial_enabled") and threshold is not None:
            # A tutorial that everyone passes by clicking one button screens nobody: not switched on.
            warning = constant_pass_warning(campaign, threshold)
            if warning:
                self.add_error("tutorial_enabled", f"{warning} The tutorial cannot be on with this gold set.")
        return data

    def clean_pass_threshold(self):
        value = self.cleaned_data["pass_threshold"]
        if not 0 <= value <= 1:
            raise forms.ValidationError("A share between 0 and 1, e.g. 0.8.")
        return value


@admin.register(CampaignOnboarding)
class CampaignOnboardingAdmin(StyledModelAdmin):
    form = OnboardingForm
    list_display = ["campaign", "tutorial_enabled", "pass_threshold", "gold_items", "is_pilot", "review"]
    list_select_related = ["campaign"]
    readonly_fields = ["gold_set_check"]

    @admin.display(description="gold set check")
    def gold_set_check(self, obj):
        if obj is None or obj.pk is None:
            return "Checked when the settings are saved."
        return constant_pass_warning(obj.campaign) or "No constant answer passes this gold set."

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(n_gold=Count("campaign__tutorial_items"))

    def get_urls(self):
        return [admin_page(self, "<id:object_id>/review/", self.review_view, "review"), *super().get_urls()]

    @admin.display(description="gold items")
    def gold_items(self, obj):
        return obj.n_gold

    @admin.display(description="pilot review")
    def review(self, obj):
        if not obj.is_pilot:
            return "–"
        return format_html(
            '<a href="{}">review captions</a>',
            reverse("admin:annotation_campaignonboarding_review", args=[obj.pk]),
        )

    def review_view(self, request, object_id):
        """Every caption of the pilot, each with accept / return-with-comment. One POST per caption."""
        onboarding = CampaignOnboarding.objects.select_related("campaign").filter(pk=object_id).first()
        if onboarding is None or not self.has_view_permission(request, onboarding):
            raise Http404
        can_decide = request.user.has_perm("annotation.change_captionreview") and request.user.has_perm(
            "annotation.add_captionreview"
        )
        if request.method == "POST":
            if not can_decide:
                raise PermissionDenied
            try:
                services.caption_review(
                    caption_id=int(request.POST.get("caption", "0") or 0),
                    decision=request.POST.get("decision", ""),
                    comment=request.POST.get("comment", ""),
                    reviewer=request.user,
                )
            except (DomainError, ValueError) as exc:
                self.message_user(request, getattr(exc, "message", "Bad request."), level=messages.ERROR)
            else:
                self.message_user(request, "Saved the decision.", level=messages.SUCCESS)
            return redirect(request.path)
        captions = selectors.pilot_captions(onboarding.campaign) if onboarding.is_pilot else []
        context = {
            **self.admin_site.each_context(request),
            "title": f"Pilot review: {onboarding.campaign}",
            "opts": self.opts,
            "onboarding": onboarding,
            "captions": captions,
            "can_decide": can_decide,
            "decisions": ReviewDecision.choices,
            "media": self.media,
        }
        return TemplateResponse(request, "admin/annotation/pilot_review.html", context)


@admin.register(TutorialItem)
class TutorialItemAdmin(StyledModelAdmin):
    list_display = ["__str__", "campaign", "position", "image", "expected"]
    list_filter = ["campaign"]
    raw_id_fields = ["image"]
    fields = ["campaign", "position", "image", "caption", "caption_right", "expected", "explanation"]

    def get_form(self, request, obj=None, change=False, **kwargs):
        base = super().get_form(request, obj, change=change, **kwargs)

        class GoldItemForm(base):
            def clean(self):
                data = super().clean()
                campaign, expected = data.get("campaign"), data.get("expected")
                if campaign is not None and expected:
                    try:
                        services.onboarding_check_item(campaign=campaign, expected=expected)
                    except DomainError as exc:
                        self.add_error("expected", exc.message)
                    if expected != services.WRITE and not (data.get("caption") or "").strip():
                        # Only a writing item may go without: its caption is merely an example.
                        self.add_error("caption", "A rating or side-by-side gold item needs its caption.")
                    if (
                        campaign.kind == CampaignKind.SIDE_BY_SIDE
                        and not (data.get("caption_right") or "").strip()
                    ):
                        self.add_error(
                            "caption_right", "A side-by-side gold item needs a right-hand caption."
                        )
                return data

        return GoldItemForm

    # A gold set is judged as a whole, so each item saved or deleted says what the set now lets
    # through; refusing single items would make a set impossible to build one item at a time.
    def _warn_constant_pass(self, request, campaigns) -> None:
        for campaign in campaigns:
            warning = constant_pass_warning(campaign)
            if warning:
                self.message_user(request, f"“{campaign}”: {warning}", messages.WARNING)

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        self._warn_constant_pass(request, [obj.campaign])

    def delete_model(self, request, obj):
        campaign = obj.campaign
        super().delete_model(request, obj)
        self._warn_constant_pass(request, [campaign])

    def delete_queryset(self, request, queryset):
        campaigns = list(Campaign.objects.filter(pk__in=queryset.values("campaign_id")))
        super().delete_queryset(request, queryset)
        self._warn_constant_pass(request, campaigns)


@admin.register(TutorialResult)
class TutorialResultAdmin(ReadOnlyAdminMixin, StyledModelAdmin):
    deletable = True

    list_display = ["annotator", "campaign", "score", "verdict", "created_at"]
    list_filter = ["campaign", "verdict"]
    list_select_related = ["annotator__user", "campaign"]
    actions = ["allow_another_attempt"]

    @admin.display(description="right")
    def score(self, obj):
        pending = f", {obj.pending} written caption(s) to check" if obj.pending else ""
        return f"{obj.correct} / {obj.total} (needs {obj.threshold:.0%}){pending}"

    @admin.action(description="Allow another attempt at the tutorial", permissions=["delete"])
    def allow_another_attempt(self, request, queryset):
        n = 0
        for result in queryset:
            services.tutorial_reset(campaign_id=result.campaign_id, annotator_id=result.annotator_id)
            n += 1
        self.message_user(request, f"{n} annotator(s) can take the tutorial again.", level=messages.SUCCESS)


class WrittenFilter(ConditionFilter):
    title = "check"
    parameter_name = "check"
    conditions = (
        ("pending", "not checked yet", Q(correct__isnull=True)),
        ("checked", "checked", Q(correct__isnull=False)),
    )


@admin.register(TutorialAnswer)
class TutorialWritingAdmin(ReadOnlyAdminMixin, StyledModelAdmin):
    """Captions written in tutorials, for a person to check (the other answers are scored at once)."""

    deletable = True

    list_display = ["annotator", "campaign", "image", "text", "verdict", "checked_by", "created_at"]
    list_filter = [WrittenFilter, "item__campaign"]
    list_select_related = ["annotator__user", "item__campaign", "item__image", "checked_by"]
    actions = ["mark_right", "mark_wrong"]

    def get_queryset(self, request):
        return super().get_queryset(request).filter(item__expected=services.WRITE)

    @admin.display(description="campaign")
    def campaign(self, obj):
        return obj.item.campaign

    @admin.display(description="image")
    def image(self, obj):
        return obj.item.image.key

    @admin.display(description="verdict")
    def verdict(self, obj):
        return {None: "not checked yet", True: "right", False: "wrong"}[obj.correct]

    def _check(self, request, queryset, correct: bool):
        n = len(
            run_service_each(
                self,
                request,
                services.tutorial_writing_check,
                queryset,
                lambda answer: {"answer_id": answer.pk, "correct": correct, "checker": request.user},
            )
        )
        self.message_user(
            request, f"Checked {n} caption(s); the annotators' results are updated.", messages.SUCCESS
        )

    @admin.action(description="Mark the selected captions right", permissions=["delete"])
    def mark_right(self, request, queryset):
        self._check(request, queryset, True)

    @admin.action(description="Mark the selected captions wrong", permissions=["delete"])
    def mark_wrong(self, request, queryset):
        self._check(request, queryset, False)


@admin.register(CaptionReview)
class CaptionReviewAdmin(ReadOnlyAdminMixin, StyledModelAdmin):
    deletable = True

    list_display = ["caption", "decision", "comment", "reviewer", "updated_at"]
    list_filter = ["decision", "caption__campaign"]
    list_select_related = ["caption__image", "caption__language", "caption__annotator__user", "reviewer"]
