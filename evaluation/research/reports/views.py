"""The report page for researchers and project managers: pick metric runs and side-by-side
campaigns (a GET form, so a report is a link that can be shared), see which metric to trust per
language (the trust table and its heatmap), the correlation table with pairwise accuracies, the
side-by-side rows, Tables 1 and 2, the per-caption agreement and the scatter plots. With nothing
chosen, the page shows the report of every finished run.

Thin: the form validates, :func:`evaluation.research.reports.report.report_from_db` builds the report and the
template shows it. The plots are images from a sibling URL that renders them on the fly from the
same query, so the page carries no inline script or style (CSP: ``script-src 'self'``,
``style-src 'self'``). Who gets in is ``core.access.can_read_research`` (researchers, project
managers, superusers); anyone else signed in gets 403, and anonymous visitors go to the login page.
"""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import admin
from django.http import Http404, HttpResponse, QueryDict
from django.shortcuts import render
from django.views.decorators.http import require_GET

from annotation.models import Campaign, CampaignKind
from core.access import research_required
from core.errors import DomainError
from evaluation.human import QUALITY_COLUMNS, STATISTICS_COLUMNS
from evaluation.models import ALL_METRICS, MetricRun, RunStatus
from evaluation.research.clip_trust_tables import clip_trust_section
from evaluation.research.comparisons import ComparisonList, comparisons_from_db
from evaluation.research.correlation import CORRELATION_N_BOOT, TAU_C_SCIPY, TAU_C_SEED001
from evaluation.research.finetune_tables import HEADERS as FINETUNE_HEADERS
from evaluation.research.reports.heatmap import runs_source, trust_heatmap
from evaluation.research.reports.plots import metric_names, scatter
from evaluation.research.reports.render import per_caption_records
from evaluation.research.reports.report import report_from_db
from evaluation.research.tables import (
    PER_CAPTION_COLUMNS,
    SXS_PAGE_COLUMNS,
    correlation_html,
    html_table,
)
from evaluation.research.trust_tables import trust_build, trust_html
from evaluation.retrieval.selectors import clip_trust_for_runs

REPORT_SXS_COLUMNS = (
    ("campaign_id", "#", "d"),
    ("campaign", "campaign", ""),
    *SXS_PAGE_COLUMNS,
    ("correlated", "in correlation", ""),
)


class RunChoiceField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, run: MetricRun) -> str:
        images = run.image_set.name if run.image_set_id else "all images"
        return (
            f"#{run.pk} {run.name} · {run.language.code} · references “{run.reference_set.name}” · "
            f"{images} · {', '.join(run.metrics)}"
        )


class CampaignChoiceField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, campaign: Campaign) -> str:
        return (
            f"#{campaign.pk} {campaign.name} · {campaign.language.code} · "
            f"{campaign.test_system.name} (m2) vs {campaign.base_system.name} (m1) · {campaign.state}"
        )


class ReportForm(forms.Form):
    runs = RunChoiceField(
        queryset=MetricRun.objects.filter(status=RunStatus.SUCCEEDED)
        .select_related("language", "reference_set", "image_set")
        .order_by("language__code", "-pk"),
        widget=forms.CheckboxSelectMultiple,
        label="Metric runs",
        error_messages={"required": "Tick at least one metric run."},
        help_text="Δmetric of a campaign comes from a run in its language that scores both systems; "
        "when several do, the one listed first.",
    )
    campaigns = CampaignChoiceField(
        queryset=Campaign.objects.filter(kind=CampaignKind.SIDE_BY_SIDE)
        .select_related("language", "base_system", "test_system")
        .order_by("language__code", "pk"),
        widget=forms.CheckboxSelectMultiple,
        required=False,
        label="Side-by-side campaigns",
        help_text="None ticked: every finished side-by-side campaign (closed, or every item judged K times); "
        "the unfinished ones are listed as left out. Ticked campaigns count whatever their state.",
    )
    metrics = forms.MultipleChoiceField(
        choices=[(name, name) for name in ALL_METRICS],
        widget=forms.CheckboxSelectMultiple,
        required=False,
        help_text="None ticked: every metric the runs have.",
    )
    one_direction = forms.BooleanField(
        required=False, label="Count each comparison once (default: both directions, as the paper)"
    )
    transfer_ratings = forms.BooleanField(
        required=False,
        label="Per caption: carry English screen-1 ratings over to translated captions (seed 001)",
    )
    tau_c = forms.ChoiceField(
        choices=[
            (TAU_C_SEED001, "seed 001's: m = 4, the ranked points of the rating scale"),
            (TAU_C_SCIPY, "scipy's: m = the smaller number of distinct values"),
        ],
        initial=TAU_C_SEED001,
        required=False,
        widget=forms.RadioSelect,
        label="Per caption: Kendall τ_c",
        help_text="The two agree when all four ratings occur. The correlation with ΔS×S always uses "
        "scipy's (ΔS×S is not a rating scale).",
    )

    def selection(self) -> dict:
        data = self.cleaned_data
        return {
            "metric_run_ids": [run.pk for run in data["runs"]],
            "campaign_ids": [c.pk for c in data["campaigns"]] or None,
            "metrics": data["metrics"] or None,
        }


def _default_query(form: ReportForm) -> QueryDict | None:
    """With nothing chosen yet, the report of every finished run (newest first within a language,
    as the form lists them) over every finished side-by-side campaign: a researcher arriving on
    the page sees the answer at once, and the form says what it was made from."""
    runs = list(form.fields["runs"].queryset.values_list("pk", flat=True))
    if not runs:
        return None
    query = QueryDict(mutable=True)
    query.setlist("runs", [str(pk) for pk in runs])
    return query


@research_required
@require_GET
def report_page(request):
    query = request.GET
    default = None
    if not query:
        default = _default_query(ReportForm())
        query = default or query
    form = ReportForm(query if query else None)
    report = None
    if form.is_bound and form.is_valid():
        try:
            report = report_from_db(
                **form.selection(),
                both_directions=not form.cleaned_data["one_direction"],
                transfer_ratings=form.cleaned_data["transfer_ratings"],
                tau_c=form.cleaned_data["tau_c"] or TAU_C_SEED001,
            )
        except DomainError as exc:
            form.add_error(None, exc.message)
    context = {
        **admin.site.each_context(request),
        "title": "Metric-vs-human report",
        "form": form,
        "report": report,
        "n_boot": CORRELATION_N_BOOT,
        "has_runs": form.fields["runs"].queryset.exists(),
        "query": query.urlencode(),
        "default_selection": default is not None,
    }
    if report is not None:
        context.update(
            correlations=correlation_html(report.correlations),
            per_caption=html_table(per_caption_records(report), PER_CAPTION_COLUMNS)
            if report.per_caption
            else None,
            sxs_table=html_table(report.sxs_rows or [], REPORT_SXS_COLUMNS),
            table1=html_table(report.table1 or [], STATISTICS_COLUMNS),
            table2=html_table(report.table2 or [], QUALITY_COLUMNS),
            notes=report.notes(),
            metrics=report.metrics,
            trust=trust_html(report.trust, report.clip_flagged) if report.trust is not None else None,
            clip_trust=list(report.clip_trust.values()),
            clip_notes=report.clip_notes(),
            clip_ratio=settings.CLIP_UNRELIABLE_R1_RATIO,
            clip_probes=clip_trust_section(report.runs),
            fine_tunes=report.fine_tunes,
            fine_tune_headers=FINETUNE_HEADERS,
        )
    return render(request, "evaluation/report.html", context)


CONTENT_TYPES = {"png": "image/png", "svg": "image/svg+xml"}


def _figure_selection(request) -> tuple[ReportForm, ComparisonList]:
    """The page's query behind a figure URL: the valid form and its comparisons (404 otherwise).
    Figures draw no ΔS×S interval, so one resample is enough."""
    form = ReportForm(request.GET)
    if not form.is_valid():
        raise Http404("No such report.")
    try:
        return form, comparisons_from_db(**form.selection(), n_boot=1)
    except DomainError as exc:
        raise Http404(exc.message) from None


def _figure_response(data: bytes, fmt: str, filename: str) -> HttpResponse:
    response = HttpResponse(data, content_type=CONTENT_TYPES[fmt])
    response["Content-Disposition"] = f'inline; filename="{filename}.{fmt}"'
    return response


@research_required
@require_GET
def report_scatter(request, metric: str, fmt: str):
    """The scatter plot of one metric for the page's query, rendered now (PNG or SVG)."""
    form, comparisons = _figure_selection(request)
    if metric not in metric_names(comparisons):
        raise Http404("No comparison has this metric.")
    data = scatter(comparisons, metric, both_directions=not form.cleaned_data["one_direction"], fmt=fmt)
    return _figure_response(data, fmt, f"scatter_{metric}")


@research_required
@require_GET
def report_trust_heatmap(request, fmt: str):
    """The trust table of the page's query as a heatmap, rendered now (PNG or SVG); the same seed and
    draws as the page, so the same numbers."""
    form, comparisons = _figure_selection(request)
    runs = form.cleaned_data["runs"]
    trust = trust_build(comparisons.items, clip_trust=clip_trust_for_runs(runs))
    if trust.table is None:
        raise Http404("No compared pair has judged images with per-caption scores.")
    data = trust_heatmap(trust.table, fmt, source=runs_source(runs), clip_flags=trust.clip_flags)
    return _figure_response(data, fmt, "trust_heatmap")
