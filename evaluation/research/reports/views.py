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
from django.http import Http404, HttpResponse, HttpResponseBadRequest, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from annotation.models import Campaign, CampaignKind
from core.access import research_required
from core.errors import DomainError
from evaluation.human import QUALITY_COLUMNS, STATISTICS_COLUMNS
from evaluation.human.selectors import caption_statistics_rows, quality_rows
from evaluation.models import (
    ALL_METRICS,
    ClipFineTune,
    MetricRun,
    ReportCacheState,
    RunStatus,
    SavedReportSelection,
)
from evaluation.research.clip_trust_tables import clip_trust_section
from evaluation.research.correlation import CORRELATION_N_BOOT, TAU_C_SCIPY, TAU_C_SEED001
from evaluation.research.finetune_tables import HEADERS as FINETUNE_HEADERS
from evaluation.research.reports.cache import REPORT, content_key, payload_load, report_enqueue, report_lookup
from evaluation.research.reports.finetune_plots import history_plot
from evaluation.research.reports.render import per_caption_records
from evaluation.research.reports.stored import (
    heatmap_name,
    report_heatmap_bytes,
    report_progress_text,
    report_scatter_bytes,
    report_selection,
    scatter_name,
)
from evaluation.research.tables import (
    PER_CAPTION_COLUMNS,
    SXS_PAGE_COLUMNS,
    correlation_html,
    html_table,
)
from evaluation.research.trust_tables import trust_html

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
        """The stored report's selection (:func:`evaluation.research.reports.stored.report_selection`)."""
        data = self.cleaned_data
        return report_selection(
            metric_run_ids=[run.pk for run in data["runs"]],
            campaign_ids=[c.pk for c in data["campaigns"]] or None,
            metrics=data["metrics"] or None,
            both_directions=not data["one_direction"],
            transfer_ratings=data["transfer_ratings"],
            tau_c=data["tau_c"] or TAU_C_SEED001,
        )


def _default_query(form: ReportForm) -> QueryDict | None:
    """With nothing chosen yet and no saved selection, the report of every finished run (newest
    first within a language, as the form lists them) over every finished side-by-side campaign: a
    researcher arriving on the page sees the answer at once, and the page says what it was made from
    and when that last changed."""
    runs = list(form.fields["runs"].queryset.values_list("pk", flat=True))
    if not runs:
        return None
    query = QueryDict(mutable=True)
    query.setlist("runs", [str(pk) for pk in runs])
    return query


def _default_changed() -> MetricRun | None:
    """The run whose finishing last changed the site default (the newest finish among finished runs)."""
    return (
        MetricRun.objects.filter(status=RunStatus.SUCCEEDED, finished_at__isnull=False)
        .order_by("-finished_at", "-pk")
        .only("pk", "name", "finished_at")
        .first()
    )


class SaveSelectionForm(forms.Form):
    query = forms.CharField(max_length=20_000, required=False)
    action = forms.ChoiceField(choices=[("save", "save"), ("forget", "forget")])


@research_required
@require_http_methods(["GET", "POST"])
def report_selection_save(request):
    """GET: the user's saved selection, if any. POST: keep the page's selection as the user's own
    default (``action=save``), or forget it (``action=forget``). A selection the report form refuses
    is not saved (400, nothing changed)."""
    if request.method == "GET":
        saved = SavedReportSelection.objects.filter(user=request.user).first()
        context = {**admin.site.each_context(request), "title": "Your saved report selection", "saved": saved}
        return render(request, "evaluation/report_selection.html", context)
    form = SaveSelectionForm(request.POST)
    if not form.is_valid():
        return HttpResponseBadRequest("Give the page's selection and save or forget.")
    if form.cleaned_data["action"] == "forget":
        SavedReportSelection.objects.filter(user=request.user).delete()
        return redirect("reports:report")
    query = QueryDict(form.cleaned_data["query"])
    report_form = ReportForm(query)
    if not report_form.is_valid():
        return HttpResponseBadRequest(
            "This selection is not valid, so it was not saved: "
            + " ".join(str(error) for errors in report_form.errors.values() for error in errors)
        )
    SavedReportSelection.objects.update_or_create(
        user=request.user,
        defaults={"query": query.urlencode(), "content_key": content_key(REPORT, report_form.selection())},
    )
    return redirect(f"{reverse('reports:report')}?{query.urlencode()}")


@research_required
@require_GET
def report_page(request):
    """The report of the chosen selection, read from its stored computation (:mod:`.cache`). While it
    is being computed the page shows the form, what is being computed, the same selection's result
    from older data when there is one, and reloads itself every few seconds."""
    query = request.GET
    default = saved = None
    if not query:
        saved = SavedReportSelection.objects.filter(user=request.user).first()
        if saved is not None:
            query = QueryDict(saved.query)
        else:
            default = _default_query(ReportForm())
            query = default or query
    form = ReportForm(query if query else None)
    report = lookup = None
    if form.is_bound and form.is_valid():
        try:
            lookup = report_lookup(REPORT, form.selection())
        except DomainError as exc:
            form.add_error(None, exc.message)
        else:
            if lookup.done:
                report = lookup.result
            elif lookup.entry.state == ReportCacheState.FAILED:
                form.add_error(None, lookup.entry.error)
            else:
                report = lookup.older
    waiting = lookup is not None and lookup.entry.state in (
        ReportCacheState.PENDING,
        ReportCacheState.RUNNING,
    )
    saved_changed = saved is not None and lookup is not None and lookup.entry.key != saved.content_key
    own = SavedReportSelection.objects.filter(user=request.user).values_list("query", flat=True).first()
    context = {
        **admin.site.each_context(request),
        "title": "Metric-vs-human report",
        "form": form,
        "report": report,
        "n_boot": CORRELATION_N_BOOT,
        "has_runs": form.fields["runs"].queryset.exists(),
        "query": query.urlencode(),
        "default_selection": default is not None,
        "default_changed": _default_changed() if default is not None else None,
        "saved": saved,
        "saved_changed": saved_changed,
        "saved_changed_at": lookup.entry.created_at if saved_changed else None,
        "is_saved": own is not None and own == query.urlencode(),
        "has_saved": own is not None,
        "waiting": waiting,
        "computing": (lookup.entry.progress or report_progress_text(lookup.entry.selection))
        if waiting
        else "",
        "computing_state": lookup.entry.get_state_display() if waiting else "",
        "computing_since": lookup.entry.created_at if waiting else None,
        "older_at": lookup.older_at if waiting and report is not None else None,
        "refresh_seconds": REFRESH_SECONDS,
    }
    if report is not None:
        # Tables 1 and 2 cover every caption, not the selection: read now (a few aggregate queries).
        report.table1, report.table2 = caption_statistics_rows(), quality_rows()
        context.update(
            correlations=correlation_html(report.correlations, report.demo_metrics),
            per_caption=html_table(per_caption_records(report), PER_CAPTION_COLUMNS)
            if report.per_caption
            else None,
            sxs_table=html_table(report.sxs_rows or [], REPORT_SXS_COLUMNS),
            table1=html_table(report.table1 or [], STATISTICS_COLUMNS),
            table2=html_table(report.table2 or [], QUALITY_COLUMNS),
            notes=report.notes(),
            metrics=report.metrics,
            trust=trust_html(report.trust, report.clip_flagged, report.demo_metrics)
            if report.trust is not None
            else None,
            demo_metrics=report.demo_metrics,
            clip_trust=list(report.clip_trust.values()),
            clip_notes=report.clip_notes(),
            clip_ratio=settings.CLIP_UNRELIABLE_R1_RATIO,
            clip_probes=clip_trust_section(report.runs),
            fine_tunes=report.fine_tunes,
            fine_tune_headers=FINETUNE_HEADERS,
        )
    return render(request, "evaluation/report.html", context)


REFRESH_SECONDS = 3
CONTENT_TYPES = {"png": "image/png", "svg": "image/svg+xml"}


def _stored_figure(request, name: str, draw) -> HttpResponse:
    """A figure of the stored report of the page's query: read when drawn before, drawn once otherwise
    (from the stored report, nothing recomputed). 404 for a bad query; 503 while the report is computed."""
    form = ReportForm(request.GET)
    if not form.is_valid():
        raise Http404("No such report.")
    try:
        entry = report_enqueue(REPORT, form.selection())
    except DomainError as exc:
        raise Http404(exc.message) from None
    if entry.state == ReportCacheState.FAILED:
        raise Http404(entry.error)
    if entry.state != ReportCacheState.DONE:
        response = HttpResponse(
            "The report is still being computed.", status=503, content_type="text/plain; charset=utf-8"
        )
        response["Retry-After"] = str(REFRESH_SECONDS)
        return response
    found = entry.figures.filter(name=name).values_list("data", flat=True).first()
    data = bytes(found) if found is not None else draw(entry, payload_load(entry))
    return data


def _figure_response(data: bytes, fmt: str, filename: str) -> HttpResponse:
    response = HttpResponse(data, content_type=CONTENT_TYPES[fmt])
    response["Content-Disposition"] = f'inline; filename="{filename}.{fmt}"'
    return response


@research_required
@require_GET
def report_scatter(request, metric: str, fmt: str):
    """The scatter plot of one metric for the page's query (PNG or SVG), from the stored report."""

    def draw(entry, report):
        if metric not in report.metrics:
            raise Http404("No comparison has this metric.")
        return report_scatter_bytes(entry, report, metric, fmt)

    data = _stored_figure(request, scatter_name(metric, fmt), draw)
    if isinstance(data, HttpResponse):
        return data
    return _figure_response(data, fmt, f"scatter_{metric}")


@research_required
@require_GET
def report_trust_heatmap(request, fmt: str):
    """The trust table of the page's query as a heatmap (PNG or SVG), from the stored report: the same
    numbers as the page."""

    def draw(entry, report):
        if report.trust is None:
            raise Http404("No compared pair has judged images with per-caption scores.")
        return report_heatmap_bytes(entry, report, fmt)

    data = _stored_figure(request, heatmap_name(fmt), draw)
    if isinstance(data, HttpResponse):
        return data
    return _figure_response(data, fmt, "trust_heatmap")


@research_required
@require_GET
def finetune_history(request, run_id: int, fmt: str):
    """A fine-tuning run's losses and dev score per epoch (PNG or SVG); 404 without a history."""
    run = ClipFineTune.objects.filter(pk=run_id).only("pk", "name", "history").first()
    if run is None or not run.history:
        raise Http404("No such fine-tuning run, or no epoch finished yet.")
    data = history_plot(run.history, fmt, title=f"Fine-tuning run #{run.pk} “{run.name}”: history")
    return _figure_response(data, fmt, f"finetune_{run.pk}_history")
