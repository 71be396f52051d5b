"""The project manager's side of recruitment and onboarding, in the admin.

* Entry links: made by a form that calls ``entry_link_create`` (a fresh token), listed with their
  state and sign-ups, revoked by an action; the change page gives the URLs to paste into Prolific
  and MTurk.
* Participants (enrolments): read-only, with the crowd ids; project managers only (the ids are
  personal data: researchers, who read the rest of the admin, do not see them).
* Onboarding and pilot settings per campaign, and the tutorial's gold items: whether a constant
  answer passes the gold set is checked whenever an item is saved or deleted (a warning) and when
  the tutorial is switched on (refused); tutorial results with their verdict, with an action that
  allows another attempt; the pilot review page.
* A panel on each campaign's page sums it up (``annotation.admin.panels``).
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.http import Http404
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

from annotation.admin.panels import campaign_panel_register
from annotation.models import (
    BatchHold,
    Campaign,
    CampaignKind,
    CampaignOnboarding,
    CampaignState,
    CaptionReview,
    Enrolment,
    EntryLink,
    HoldDecision,
    ReviewDecision,
    TutorialAnswer,
    TutorialItem,
    TutorialResult,
    TutorialVerdict,
    WrittenCaption,
)
from annotation.workforce import selectors, services
from core.access import is_project_manager
from core.admin import ReadOnlyAdminMixin, StyledModelAdmin, count_of, run_service, service_form_view
from core.errors import DomainError
from core.scales import RATING, SXS

PROLIFIC_QUERY = "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
MTURK_QUERY = "?workerId=WORKER_ID&assignmentId=ASSIGNMENT_ID&hitId=HIT_ID"


def managers_only(user) -> bool:
    return user.is_active and (user.is_superuser or is_project_manager(user))


class ManagersOnlyAdmin(StyledModelAdmin):
    """Pages with crowd ids or admission secrets: project managers (and superusers) only."""

    def has_module_permission(self, request):
        return managers_only(request.user) and super().has_module_permission(request)

    def has_view_permission(self, request, obj=None):
        return managers_only(request.user) and super().has_view_permission(request, obj)


# --- Entry links ----------------------------------------------------------------------------------


class EntryLinkCreateForm(forms.Form):
    campaign = forms.ModelChoiceField(Campaign.objects.exclude(state=CampaignState.CLOSED).order_by("name"))
    label = forms.CharField(max_length=200, required=False)
    expires_at = forms.DateTimeField(
        required=False, label="Expires at", help_text="YYYY-MM-DD HH:MM (UTC). Empty: never."
    )
    max_signups = forms.IntegerField(required=False, min_value=1, label="Sign-up cap")
    quota_batches = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=1000,
        label="Batches per participant",
        help_text="Empty: no limit (the completion code is shown after every batch).",
    )
    completion_code = forms.CharField(max_length=64, required=False)
    completion_url = forms.URLField(max_length=500, required=False, assume_scheme="https")
    screenout_code = forms.CharField(
        max_length=64,
        required=False,
        label="Screen-out code",
        help_text="For participants whose languages do not fit (e.g. Prolific's screen-out code). "
        "Empty: they are asked to return the study.",
    )
    screenout_url = forms.URLField(
        max_length=500, required=False, assume_scheme="https", label="Screen-out URL"
    )


class EntryLinkChangeForm(forms.ModelForm):
    class Meta:
        model = EntryLink
        fields = [
            "label",
            "expires_at",
            "max_signups",
            "quota_batches",
            "completion_code",
            "completion_url",
            "screenout_code",
            "screenout_url",
        ]

    def clean(self):
        data = super().clean()
        cap = data.get("max_signups")
        if cap is not None and cap < self.instance.signups:
            raise forms.ValidationError(
                f"{self.instance.signups} people have already joined: the cap cannot be below that."
            )
        for name, what in (("completion_code", "completion code"), ("screenout_code", "screen-out code")):
            code = data.get(name) or ""
            if code and not services.COMPLETION_CODE.match(code):
                self.add_error(name, f"A {what} is 1 to 64 letters, digits, '_' or '-'.")
        return data


@admin.register(EntryLink)
class EntryLinkAdmin(ManagersOnlyAdmin):
    form = EntryLinkChangeForm
    list_display = ["__str__", "campaign", "status", "places", "expires_at", "quota_batches", "created_at"]
    list_filter = ["campaign"]
    list_select_related = ["campaign"]
    actions = ["revoke"]
    readonly_fields = ["campaign", "participant_urls", "signups", "revoked_at"]
    fields = [
        "campaign",
        "participant_urls",
        "label",
        "expires_at",
        "max_signups",
        "signups",
        "quota_batches",
        "completion_code",
        "completion_url",
        "screenout_code",
        "screenout_url",
        "revoked_at",
    ]

    def add_view(self, request, form_url="", extra_context=None):
        initial = (
            {"campaign": request.GET.get("campaign")} if request.GET.get("campaign", "").isdigit() else {}
        )
        return service_form_view(
            self,
            request,
            form_class=EntryLinkCreateForm,
            create=lambda d: services.entry_link_create(
                campaign_id=d["campaign"].pk,
                label=d["label"],
                expires_at=d["expires_at"],
                max_signups=d["max_signups"],
                completion_code=d["completion_code"],
                completion_url=d["completion_url"],
                quota_batches=d["quota_batches"],
                screenout_code=d["screenout_code"],
                screenout_url=d["screenout_url"],
            ),
            title="New entry link",
            done=lambda link: f"Created the entry link “{link}”: give participants the URL below.",
            initial=initial,
        )

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        self._request = request  # the URLs on the page are absolute: they are pasted into crowd platforms
        return super().changeform_view(request, object_id, form_url, extra_context)

    @admin.display(description="participant URLs")
    def participant_urls(self, obj):
        base = reverse("annotation:join", args=[obj.token])
        request = getattr(self, "_request", None)
        if request is not None:
            base = request.build_absolute_uri(base)
        return format_html(
            "<p>Direct (participants create an account): <code class='entry-url'>{}</code></p>"
            "<p>Prolific (study URL, with URL parameters on): <code class='entry-url-prolific'>{}</code></p>"
            "<p>MTurk (external question URL; MTurk adds the ids): <code>{}</code></p>",
            base,
            base + PROLIFIC_QUERY,
            base + MTURK_QUERY,
        )

    @admin.display(description="state")
    def status(self, obj):
        return services.link_closed_reason(obj) or "admitting"

    @admin.display(description="sign-ups")
    def places(self, obj):
        return f"{obj.signups} / {obj.max_signups}" if obj.max_signups else str(obj.signups)

    @admin.action(description="Revoke selected entry links", permissions=["change"])
    def revoke(self, request, queryset):
        done = [run_service(self, request, services.entry_link_revoke, link_id=link.pk) for link in queryset]
        n = len([d for d in done if d is not None])
        self.message_user(request, f"Revoked {n} entry link{'s' if n != 1 else ''}.", level=messages.SUCCESS)


@admin.register(Enrolment)
class EnrolmentAdmin(ReadOnlyAdminMixin, ManagersOnlyAdmin):
    deletable = True

    list_display = [
        "annotator",
        "pseudonym",
        "campaign",
        "platform",
        "worker_id",
        "study_id",
        "session_id",
        "skills_declared_at",
        "created_at",
    ]
    list_filter = ["campaign", "platform"]
    search_fields = ["worker_id", "annotator__user__username", "annotator__pseudonym"]
    list_select_related = ["annotator__user", "campaign"]

    @admin.display(description="pseudonym")
    def pseudonym(self, obj):
        return obj.annotator.pseudonym


# --- Held batches: crowd work that does not count until a manager accepts it -------------------------


@admin.register(BatchHold)
class BatchHoldAdmin(ReadOnlyAdminMixin, ManagersOnlyAdmin):
    """Batches of entry-link participants that left too many images unanswered
    (``annotation.workforce.counting``). Accept: the batch counts (results, K, quota, completion code).
    Reject: it stays stored and out of every result. Read-only otherwise: not even deleted, since a hold is
    the record that its batch does not count (removed, the batch would neither count nor be held)."""

    list_display = [
        "batch_link",
        "campaign",
        "participant",
        "submitted_at",
        "figures",
        "decision",
        "reviewer",
    ]
    list_filter = ["decision", "batch__campaign"]
    list_select_related = ["batch__campaign", "batch__annotator", "reviewer"]
    search_fields = ["batch__annotator__pseudonym"]
    actions = ["accept", "reject"]
    fields = [
        "batch_link",
        "campaign",
        "participant",
        "submitted_at",
        "figures",
        "threshold",
        "decision",
        "reviewer",
        "reviewed_at",
        "answers",
    ]
    readonly_fields = fields

    @admin.display(description="batch")
    def batch_link(self, obj):
        return f"batch {obj.batch_id}"

    @admin.display(description="campaign", ordering="batch__campaign__name")
    def campaign(self, obj):
        return obj.batch.campaign

    @admin.display(description="participant (pseudonym)")
    def participant(self, obj):
        return obj.batch.annotator.pseudonym

    @admin.display(description="submitted", ordering="batch__submitted_at")
    def submitted_at(self, obj):
        return obj.batch.submitted_at

    @admin.display(description="why held")
    def figures(self, obj):
        parts = [f"{obj.not_enough_info} of {obj.images} rated NOT-ENOUGH-INFO"]
        if obj.batch.campaign.kind == CampaignKind.CAPTION:
            parts.append(f"{obj.without_caption} of {obj.images} without a caption")
        return ", ".join(parts)

    @admin.display(description="counts with at most", ordering="max_unanswered_share")
    def threshold(self, obj):
        return f"{obj.max_unanswered_share:.0%} unanswered on each screen"

    @admin.display(description="answers")
    def answers(self, obj):
        rows = selectors.held_batch_answers(obj)
        return format_html(
            "<table class='held-answers'><thead><tr><th>#</th><th>image</th><th>answer</th><th>caption</th>"
            "<th>report</th></tr></thead><tbody>{}</tbody></table>",
            format_html_join(
                "",
                "<tr><td>{}</td><td>{}{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                (
                    (
                        r["position"],
                        r["image"],
                        " (control)" if r["control"] else "",
                        r["answer"],
                        r["caption"],
                        r["report"],
                    )
                    for r in rows
                ),
            ),
        )

    def has_review_permission(self, request):
        return managers_only(request.user)

    def _decide(self, request, queryset, accept: bool):
        done = [
            run_service(
                self,
                request,
                services.batch_hold_decide,
                hold_id=hold.pk,
                accept=accept,
                reviewer=request.user,
            )
            for hold in queryset
        ]
        n = len([d for d in done if d is not None])
        verb = "Accepted" if accept else "Rejected"
        what = "they count now" if accept else "they stay stored, out of every result"
        self.message_user(
            request, f"{verb} {n} held batch{'es' if n != 1 else ''}: {what}.", level=messages.SUCCESS
        )

    @admin.action(
        description="Accept: the batch counts (results, K, quota, completion code)", permissions=["review"]
    )
    def accept(self, request, queryset):
        self._decide(request, queryset, accept=True)

    @admin.action(description="Reject: keep it stored, out of every result", permissions=["review"])
    def reject(self, request, queryset):
        self._decide(request, queryset, accept=False)


# --- Onboarding, tutorial and pilot -------------------------------------------------------------------


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
        info = self.opts.app_label, self.opts.model_name
        return [
            path(
                "<id:object_id>/review/",
                self.admin_site.admin_view(self.review_view),
                name="{}_{}_review".format(*info),
            ),
            *super().get_urls(),
        ]

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


class WrittenFilter(admin.SimpleListFilter):
    title = "check"
    parameter_name = "check"

    def lookups(self, request, model_admin):
        return [("pending", "not checked yet"), ("checked", "checked")]

    def queryset(self, request, queryset):
        if self.value() == "pending":
            return queryset.filter(correct__isnull=True)
        if self.value() == "checked":
            return queryset.filter(correct__isnull=False)
        return queryset


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
        n = 0
        for answer in queryset:
            if (
                run_service(
                    self,
                    request,
                    services.tutorial_writing_check,
                    answer_id=answer.pk,
                    correct=correct,
                    checker=request.user,
                )
                is not None
            ):
                n += 1
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


# --- The panel on a campaign's page ------------------------------------------------------------------


def recruitment_panel(campaign: Campaign) -> dict:
    """Entry links, participants, tutorial results and the pilot review of one campaign. Two queries."""
    figures = (
        Campaign.objects.filter(pk=campaign.pk)
        .annotate(
            n_participants=count_of(Enrolment, "campaign"),
            n_gold=count_of(TutorialItem, "campaign"),
            n_passed=count_of(TutorialResult, "campaign", verdict=TutorialVerdict.PASSED),
            n_failed=count_of(TutorialResult, "campaign", verdict=TutorialVerdict.FAILED),
            n_pending=count_of(TutorialResult, "campaign", verdict=TutorialVerdict.PENDING),
            n_reviewed=count_of(CaptionReview, "caption__campaign"),
            n_held=count_of(BatchHold, "batch__campaign", decision=HoldDecision.HELD),
        )
        .values(
            "n_participants",
            "n_gold",
            "n_passed",
            "n_failed",
            "n_pending",
            "n_reviewed",
            "n_held",
            "onboarding__pk",
            "onboarding__tutorial_enabled",
            "onboarding__pass_threshold",
            "onboarding__is_pilot",
        )
        .get()
    )
    onboarding = None
    if figures["onboarding__pk"] is not None:
        onboarding = {
            "pk": figures["onboarding__pk"],
            "tutorial_enabled": figures["onboarding__tutorial_enabled"],
            "pass_threshold": figures["onboarding__pass_threshold"],
            "is_pilot": figures["onboarding__is_pilot"],
        }
    # The pilots that prepare this campaign, each with how its review stands (one query in all).
    pilots = list(
        Campaign.objects.filter(onboarding__main_campaign=campaign, onboarding__is_pilot=True)
        .annotate(
            n_captions=count_of(WrittenCaption, "campaign"),
            n_accepted=count_of(CaptionReview, "caption__campaign", decision=ReviewDecision.ACCEPTED),
            n_returned=count_of(CaptionReview, "caption__campaign", decision=ReviewDecision.RETURNED),
        )
        .values("pk", "name", "onboarding__pk", "n_captions", "n_accepted", "n_returned")
    )
    return {
        "campaign": campaign,
        "pilots": pilots,
        "links": list(EntryLink.objects.filter(campaign=campaign).order_by("-created_at")),
        "participants": figures["n_participants"],
        "onboarding": onboarding,
        "gold_items": figures["n_gold"],
        "passed": figures["n_passed"],
        "failed": figures["n_failed"],
        "pending": figures["n_pending"],
        "reviewed": figures["n_reviewed"],
        "held": figures["n_held"],
    }


campaign_panel_register(
    name="recruitment",
    kinds=[CampaignKind.CAPTION, CampaignKind.SIDE_BY_SIDE, CampaignKind.RATING],
    template="admin/annotation/campaign/recruitment_panel.html",
    build=recruitment_panel,
)
