"""Entry links (made by a form that calls ``entry_link_create``, revoked by an action, with the URLs to paste
into Prolific and MTurk), the read-only list of participants, and crowd batches held for review."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from annotation.models import (
    BatchHold,
    Campaign,
    CampaignKind,
    CampaignState,
    Enrolment,
    EntryLink,
)
from annotation.workforce import selectors, services
from annotation.workforce.admin.managers import ManagersOnlyAdmin, managers_only
from core.admin import ReadOnlyAdminMixin, run_service, run_service_each, service_form_view

PROLIFIC_QUERY = "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
MTURK_QUERY = "?workerId=WORKER_ID&assignmentId=ASSIGNMENT_ID&hitId=HIT_ID"


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
        decided = run_service_each(
            self,
            request,
            services.batch_hold_decide,
            queryset,
            lambda hold: {"hold_id": hold.pk, "accept": accept, "reviewer": request.user},
        )
        n = len(decided)
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
