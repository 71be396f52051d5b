"""Retrieval checks in the admin: start one (planned once, through the service), follow it, read its
per-language table and figure (R@1 by language, English marked), resume it."""

from __future__ import annotations

import re

from django import forms
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.urls import re_path, reverse
from django.utils.html import format_html, format_html_join

from annotation.models import Campaign, CampaignKind
from core.admin import ServiceCheckedForm, StyledModelAdmin
from core.converters import IdConverter
from core.jobs.admin import JobAdminMixin, PlannedJobAdminMixin
from evaluation.admin.clip_model_form import ClipCheckColumns, ClipCheckModelFields, LanguageCodesField
from evaluation.models import ReferenceSet, RetrievalCheck, RunStatus
from evaluation.research.retrieval_tables import HEADERS, retrieval_r1_figure, retrieval_rows
from evaluation.retrieval.plan import (
    retrieval_check_plan,
    retrieval_check_store,
)
from evaluation.retrieval.selectors import check_trust, retrieval_check_queryset
from evaluation.retrieval.tasks import RETRIEVAL_CHECK

CONTENT_TYPES = {"png": "image/png", "svg": "image/svg+xml"}


class RetrievalCheckStartForm(ServiceCheckedForm, ClipCheckModelFields, forms.ModelForm):
    """Start a check: the service's own validation, so every problem shows on the form."""

    name = forms.CharField(
        required=False, max_length=200, help_text="Empty: the model and the data it is checked on."
    )
    campaigns = forms.ModelMultipleChoiceField(
        queryset=Campaign.objects.filter(kind=CampaignKind.CAPTION)
        .select_related("language")
        .order_by("name"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="The human captions written in these caption campaigns, per language.",
    )
    reference_sets = forms.ModelMultipleChoiceField(
        queryset=ReferenceSet.objects.select_related("language").order_by("language__code", "name"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Or imported reference sets (e.g. XM3600), one per language. Tick campaigns or sets, not both.",
    )
    language_codes = LanguageCodesField(
        help_text="Codes separated by spaces or commas (“en de sw”); empty: every language of the data. "
        "Include en: the other languages are judged against English.",
    )

    class Meta:
        model = RetrievalCheck
        fields = ["name"]

    def check(self, data):
        self.plan = retrieval_check_plan(
            campaigns=[str(c.pk) for c in data.get("campaigns") or []],
            reference_sets=[str(r.pk) for r in data.get("reference_sets") or []],
            **self.clip_check_arguments(data),
        )


@admin.register(RetrievalCheck)
class RetrievalCheckAdmin(ClipCheckColumns, JobAdminMixin, PlannedJobAdminMixin, StyledModelAdmin):
    list_display = [
        "id",
        "name",
        "clip_model_label",
        "languages_list",
        "status",
        "progress",
        "flagged",
        "finished_at",
    ]
    search_fields = ["name", "model_id"]
    job_kind = RETRIEVAL_CHECK
    check_fields = [
        "name",
        *ClipCheckColumns.CHECK_HEAD_FIELDS,
        "source",
        "data_list",
        "languages_list",
        "results_table",
        "figure",
        *JobAdminMixin.LIFECYCLE_FIELDS,
        "versions",
    ]
    job_fields = check_fields
    job_store = staticmethod(retrieval_check_store)
    job_start_form = RetrievalCheckStartForm
    job_start_fields = [
        "name",
        "campaigns",
        "reference_sets",
        "language_codes",
        "clip_model",
        "model",
        "pretrained",
        "checkpoint",
    ]

    def get_queryset(self, request):
        return retrieval_check_queryset()

    # --- the figure -------------------------------------------------------------------------------

    def get_urls(self):
        return [
            # Anything before "/figure." reaches the view, which answers 404 for what is not an id or
            # a format: a narrower pattern would hand hostile values to the admin's catch-all (301).
            re_path(
                r"^(?P<check_id>.+)/figure\.(?P<fmt>.+)$",
                self.admin_site.admin_view(self.figure_view),
                name="evaluation_retrievalcheck_figure",
            ),
            *super().get_urls(),
        ]

    def figure_view(self, request, check_id: str, fmt: str):
        """R@1 by language, English marked, flagged languages hatched (PNG or SVG), rendered now."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        if not re.fullmatch(IdConverter.regex, str(check_id)):
            raise Http404("No such check.")
        check = RetrievalCheck.objects.filter(pk=int(check_id)).first()
        if fmt not in CONTENT_TYPES or check is None or not check.results:
            raise Http404("No such figure: the check has no results yet.")
        title = f"Retrieval check #{check.pk}: text→image R@1 by language, {check.model_label}"
        data = retrieval_r1_figure(check.results, check_trust(check), fmt, title=title)
        response = HttpResponse(data, content_type=CONTENT_TYPES[fmt])
        response["Content-Disposition"] = f'inline; filename="retrieval_check_{check.pk}_r1.{fmt}"'
        return response

    # --- columns ----------------------------------------------------------------------------------

    @admin.display(description="CLIP-based scores unreliable in")
    def flagged(self, check):
        if check.status != RunStatus.SUCCEEDED:
            return "–"
        codes = sorted(code for code, v in check_trust(check).items() if v.flagged)
        return ", ".join(codes) or "none"

    @admin.display(description="data")
    def data_list(self, check):
        items = [f"campaign “{c.name}”" for c in check.campaigns.all()]
        items += [f"reference set “{r.name}”" for r in check.reference_sets.all()]
        return "; ".join(items)

    @admin.display(description="results (recalls in %)")
    def results_table(self, check):
        if not check.results:
            return "no results yet"
        rows = retrieval_rows(check.results, check_trust(check))
        head = format_html_join("", "<th class='num'>{}</th>", ((h,) for h in HEADERS))
        body = format_html_join(
            "",
            "<tr class='{}' data-language='{}'><td>{}</td>{}<td class='num'>{}</td><td class='num'>{}</td><td>{}</td></tr>",
            (
                (
                    "clip-unreliable" if row["flagged"] else "",
                    row["language"],
                    row["language"],
                    format_html_join("", "<td class='num'>{}</td>", ((c,) for c in row["cells"])),
                    row["n_images"],
                    row["n_captions"],
                    row["note"],
                )
                for row in rows
            ),
        )
        return format_html(
            "<table id='retrieval-results'><thead><tr><th>language</th>{}<th class='num'>images</th>"
            "<th class='num'>captions</th><th>verdict</th></tr></thead><tbody>{}</tbody></table>",
            head,
            body,
        )

    @admin.display(description="R@1 by language")
    def figure(self, check):
        if not check.results:
            return "–"
        svg = reverse("admin:evaluation_retrievalcheck_figure", args=[check.pk, "svg"])
        png = reverse("admin:evaluation_retrievalcheck_figure", args=[check.pk, "png"])
        return format_html(
            "<img src='{}' alt='Text→image R@1 by language, English marked' class='retrieval-figure'><br>"
            "<a href='{}'>PNG</a> · <a href='{}'>SVG</a>",
            svg,
            png,
            svg,
        )
