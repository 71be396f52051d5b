"""The read-only "Annotator hours" page: per annotator, submitted batches, images and time, over a
period and one campaign or all, on the page and as CSV (for paying people)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, time, timedelta

from django import forms
from django.contrib import admin
from django.http import StreamingHttpResponse
from django.template.response import TemplateResponse

from annotation.models import Annotator, Campaign
from annotation.quality.hours import annotator_hours
from core.admin import seconds_display
from evaluation.admin.pages import ReadOnlyPageAdmin
from evaluation.demo.services import RATER_EMAIL_DOMAIN
from evaluation.models import AnnotatorHours
from evaluation.research.exports.rows import HOURS_COLUMNS, utc_iso
from evaluation.research.exports.writers import csv_lines

# The hours export's columns without the campaign, with the user name the manager needs to pay.
CSV_COLUMNS = ("annotator", "annotator_username", *HOURS_COLUMNS[3:])


class HoursFilter(forms.Form):
    campaign = forms.ModelChoiceField(
        queryset=Campaign.objects.order_by("name"), required=False, empty_label="all campaigns"
    )
    since = forms.DateField(required=False, help_text="First day (UTC), included.")
    until = forms.DateField(required=False, help_text="Last day (UTC), included.")
    simulated = forms.BooleanField(
        required=False,
        label="Include simulated raters",
        help_text="The demo's simulated raters are not people and are left out unless ticked.",
    )

    def clean(self):
        data = super().clean()
        if data.get("since") and data.get("until") and data["until"] < data["since"]:
            raise forms.ValidationError("The last day comes before the first day.")
        return data


def simulated_annotator_ids() -> set[int]:
    """The demo's simulated raters (accounts at the never-delivered ``simulated.invalid`` domain)."""
    return set(
        Annotator.objects.filter(user__email__iendswith=f"@{RATER_EMAIL_DOMAIN}").values_list("pk", flat=True)
    )


def _moment(day, *, next_day: bool = False):
    if day is None:
        return None
    return datetime.combine(day + timedelta(days=int(next_day)), time.min, tzinfo=UTC)


@admin.register(AnnotatorHours)
class AnnotatorHoursAdmin(ReadOnlyPageAdmin):
    def page_view(self, request, extra_context=None):
        form = HoursFilter(request.GET or None)
        rows = []
        if form.is_bound and not form.is_valid():
            rows = None
        else:
            data = form.cleaned_data if form.is_bound else {}
            campaign = data.get("campaign")
            rows = annotator_hours(
                campaign_id=campaign.pk if campaign else None,
                since=_moment(data.get("since")),
                until=_moment(data.get("until"), next_day=True),
            )
        hidden = 0
        if rows and not (form.is_bound and form.cleaned_data.get("simulated")):
            simulated = simulated_annotator_ids()
            kept = [r for r in rows if r.annotator_id not in simulated]
            hidden, rows = len(rows) - len(kept), kept
        if rows is not None and request.GET.get("format") == "csv":
            records = (
                {
                    "annotator": r.pseudonym,
                    "annotator_username": r.username,
                    "batches": r.batches,
                    "items": r.items,
                    "control_items": r.control_items,
                    "screen_hours": round(r.screen_hours, 4),
                    "unmeasured_batches": r.unmeasured_batches,
                    "wall_hours": round(r.wall_hours, 4),
                    "first_submit": utc_iso(r.first_submit),
                    "last_submit": utc_iso(r.last_submit),
                }
                for r in rows
            )
            response = StreamingHttpResponse(
                csv_lines(CSV_COLUMNS, records, counts=Counter()),
                content_type="text/csv; charset=utf-8; header=present",
            )
            response["Content-Disposition"] = 'attachment; filename="annotator-hours.csv"'
            return response
        query = request.GET.copy()
        query["format"] = "csv"
        context = {
            **self.admin_site.each_context(request),
            "title": "Annotator hours",
            "opts": self.opts,
            "media": self.media + form.media,
            "form": form,
            "rows": [
                {
                    "row": r,
                    "screen": seconds_display(r.screen_seconds),
                    "wall": seconds_display(r.wall_seconds),
                }
                for r in rows or []
            ],
            "csv_url": f"?{query.urlencode()}",
            "simulated_hidden": hidden,
            **(extra_context or {}),
        }
        return TemplateResponse(request, "admin/evaluation/annotatorhours/change_list.html", context)
