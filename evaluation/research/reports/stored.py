"""What the report page and the trust / correlation API store per selection (:mod:`.cache`): the
computers of each kind and the figures rendered from a stored report.

A section added to the report (a new check, a new table) is computed in :func:`report_compute_for`
through :func:`report_from_db`, so it is stored with the rest and never recomputed per request.
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import transaction

from evaluation.models import MetricRun, RunStatus
from evaluation.research.comparisons import comparisons_from_db, metric_runs_for_report
from evaluation.research.correlation import CORRELATION_N_BOOT, TAU_C_SEED001
from evaluation.research.meta_evaluation import DEFAULT_N_PERMUTATIONS
from evaluation.research.reports.cache import REPORT, computer, eager, figure_bytes, report_enqueue
from evaluation.research.reports.heatmap import runs_source, trust_heatmap
from evaluation.research.reports.pieces import report_pieces
from evaluation.research.reports.plots import PlotFormat, scatter
from evaluation.research.reports.report import Report, demo_metrics_of, report_from_db
from evaluation.research.trust_tables import model_level, trust_build
from evaluation.retrieval.selectors import clip_trust_for_runs

API_TRUST = "api-trust"
API_CORRELATIONS = "api-correlations"
PAGE_FORMAT: PlotFormat = "svg"  # what the page shows, drawn when the report is stored


def report_selection(
    *,
    metric_run_ids,
    campaign_ids=None,
    metrics=None,
    both_directions: bool = True,
    transfer_ratings: bool = False,
    tau_c: str = TAU_C_SEED001,
) -> dict:
    """The page's selection as plain values: what the stored report is keyed by."""
    return {
        "metric_run_ids": [int(pk) for pk in metric_run_ids],
        "campaign_ids": None if campaign_ids is None else sorted(int(pk) for pk in campaign_ids),
        "metrics": list(metrics) if metrics else None,
        "both_directions": bool(both_directions),
        "transfer_ratings": bool(transfer_ratings),
        "tau_c": tau_c,
        "n_boot": CORRELATION_N_BOOT,
        "n_permutations": DEFAULT_N_PERMUTATIONS,
    }


def report_progress_text(selection: dict) -> str:
    runs = ", ".join(f"#{pk}" for pk in selection["metric_run_ids"])
    campaigns = (
        "every finished side-by-side campaign"
        if selection.get("campaign_ids") is None
        else f"campaigns #{', #'.join(map(str, selection['campaign_ids']))}"
    )
    return (
        f"ΔS×S intervals, correlations ({selection['n_boot']} bootstrap resamples) and the trust table "
        f"({selection['n_permutations']} permutation draws per pair of metrics) of metric runs {runs} over "
        f"{campaigns}"
    )


def scatter_name(metric: str, fmt: str) -> str:
    return f"scatter:{metric}.{fmt}"


def heatmap_name(fmt: str) -> str:
    return f"heatmap.{fmt}"


def report_scatter_bytes(entry, report: Report, metric: str, fmt: PlotFormat) -> bytes:
    return figure_bytes(
        entry,
        scatter_name(metric, fmt),
        lambda: scatter(
            report.comparisons,
            metric,
            both_directions=report.both_directions,
            fmt=fmt,
            demo=metric in report.demo_metrics,
        ),
    )


def report_heatmap_bytes(entry, report: Report, fmt: PlotFormat) -> bytes:
    return figure_bytes(
        entry,
        heatmap_name(fmt),
        lambda: trust_heatmap(
            report.trust,
            fmt,
            source=runs_source(report.runs),
            clip_flags=report.clip_flagged,
            demo_metrics=report.demo_metrics,
        ),
    )


def _report_figures(entry, report: Report) -> None:
    """The page's figures (SVG), drawn once with the report so that the page shows them at once."""
    for metric in report.metrics:
        report_scatter_bytes(entry, report, metric, PAGE_FORMAT)
    if report.trust is not None:
        report_heatmap_bytes(entry, report, PAGE_FORMAT)


@computer(REPORT, after=_report_figures)
def report_compute_for(selection: dict, progress: Callable[[str], None]) -> Report:
    """The report of a page selection, without Tables 1 and 2 (read per request: they cover every
    caption, not the selection)."""
    progress(report_progress_text(selection))
    return report_from_db(
        metric_run_ids=selection["metric_run_ids"],
        campaign_ids=selection["campaign_ids"],
        metrics=selection["metrics"],
        both_directions=selection["both_directions"],
        transfer_ratings=selection["transfer_ratings"],
        tau_c=selection["tau_c"],
        n_boot=selection["n_boot"],
        n_permutations=selection["n_permutations"],
        human_tables=False,
    )


@computer(API_TRUST)
def api_trust_compute(selection: dict, progress: Callable[[str], None]):
    """``(comparisons, trust or why not, demo metrics)`` of the trust API's selection."""
    found = comparisons_from_db(metric_run_ids=selection["runs"], campaign_ids=selection.get("campaigns"))
    runs = metric_runs_for_report(selection["runs"])
    try:
        trust = trust_build(
            found.items,
            list(found),
            clip_trust=clip_trust_for_runs(runs),
            n_boot=selection["n_boot"],
            n_permutations=selection["n_permutations"],
            seed=selection["seed"],
            pieces=report_pieces(),
        )
    except ValueError as exc:
        return found, f"These comparisons cannot be judged: {exc}.", []
    return found, trust, demo_metrics_of(runs)


@computer(API_CORRELATIONS)
def api_correlations_compute(selection: dict, progress: Callable[[str], None]):
    """``(comparisons, results, demo metrics)`` of the correlations API's selection (results: a message
    when the comparisons cannot be correlated)."""
    found = comparisons_from_db(metric_run_ids=selection["runs"], campaign_ids=selection.get("campaigns"))
    try:
        results = model_level(
            list(found),
            found.items,
            both_directions=selection["both_directions"],
            n_boot=selection["n_boot"],
            n_permutations=selection["n_permutations"],
            seed=selection["seed"],
        )
    except ValueError as exc:
        return found, f"These comparisons cannot be correlated: {exc}.", []
    return found, results, demo_metrics_of(metric_runs_for_report(selection["runs"]))


def api_selection(params: dict, **extra) -> dict:
    """The API's validated parameters as a stored selection (``metric_run_ids`` / ``campaign_ids`` name
    what :func:`.cache.content_key` reads)."""
    runs = [int(pk) for pk in params["runs"]]
    campaigns = params.get("campaigns")
    return {
        "runs": runs,
        "campaigns": None if campaigns is None else [int(pk) for pk in campaigns],
        "metric_run_ids": runs,
        "campaign_ids": None if campaigns is None else sorted(int(pk) for pk in campaigns),
        "n_boot": params["n_boot"],
        "n_permutations": params["n_permutations"],
        "seed": params["seed"],
        **extra,
    }


def default_run_ids() -> list[int]:
    """The site default's runs: every succeeded metric run, by language code then newest first (the
    order the report form lists them, which decides which run a Δmetric comes from)."""
    return list(
        MetricRun.objects.filter(status=RunStatus.SUCCEEDED)
        .order_by("language__code", "-pk")
        .values_list("pk", flat=True)
    )


def report_precompute_listener(kind_name: str, job_id: int) -> None:
    """When a metric run succeeds, queue the site default's report (every finished run over every
    finished side-by-side campaign), so that the page opens on it at once. Where Celery runs eagerly
    (the embedded default, the tests) nothing is queued: the page computes it on its first visit."""
    if kind_name != "metric_run" or eager():
        return
    runs = default_run_ids()
    if runs:
        report_enqueue(REPORT, report_selection(metric_run_ids=runs))


def report_precompute_on_campaign(sender, instance, **kwargs) -> None:
    """A side-by-side campaign saved as closed (``post_save`` of ``annotation.Campaign``): queue the
    site default's report once the save commits, as when a metric run succeeds."""
    from annotation.models import CampaignKind, CampaignState

    if instance.kind == CampaignKind.SIDE_BY_SIDE and instance.state == CampaignState.CLOSED:
        transaction.on_commit(lambda: report_precompute_listener("metric_run", 0))
