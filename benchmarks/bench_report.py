"""How fast the report page paints and completes: the per-request computation it replaced (called
directly, as the old view did on every request and every figure) against the stored report, in the
same run, on two selections.

    .venv/bin/python benchmarks/bench_report.py [--images 25] [--languages 36] [--skip-demo]
        [--skip-xm3600] [--no-before] [--profile before|after]

* **demo**: ``load_demo`` and ``load_demo_results`` (three languages, simulated side-by-side campaigns
  and their metric runs) in a throwaway test database (PostgreSQL with DATABASE_URL, as test_<name>).
  Before: ``report_from_db`` with the page's settings and the HTML cells (first paint: the old page
  showed nothing until this was done), then every figure the page shows, each recomputing its
  comparisons (and the trust table for the heatmap). After: the page through Django's test client
  (first paint), then every figure it links (complete); cold (nothing stored yet: the page that says
  what it computes, Celery not eager) and warm (stored). The background computation's own time is
  printed too: it runs once per selection, when a run finishes, not per request.
* **XM3600-size**: a synthetic selection of ``--languages`` languages × 4 systems × 24 comparisons per
  language (each pair of systems compared on 4 image subsets) × ``--images`` judged images each, with
  8 metrics, as plain comparisons and items (building 36 × 24 campaigns with their judgments in the
  database would take longer than the report). First the computation a stored report runs once per
  selection content, ``trust_build`` (correlations with bootstrap, soft pairwise accuracy, acc23 with
  bootstrap and permutation tests): before (the reference implementation: every permutation draw's
  hybrids sorted row by row, every bootstrap resample's Kendall τ counted pair by pair; skip it with
  ``--no-before``) and after (vectorised), the whole selection, then with each language's piece
  stored (``ReportPiece``) after one language's Δmetric changed (a new metric run there): only that
  language and the pooled column are computed. Each side's numbers are checked to be the same.
  ``--profile before|after`` prints a cProfile of the computation first. Then the page: the
  per-request computation (the HTML cells and every figure) against the stored row read and
  unpickled, the HTML cells, the page template rendered, and every figure read from its stored bytes.

Times are wall-clock seconds on this machine; both sides run in this process, one after the other.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from contextlib import contextmanager, nullcontext
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402

METRICS = ("BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "ROUGE-L", "CIDEr", "CIDEr-D", "CLIPScore")
SYSTEMS = ("s1", "s2", "s3", "s4")


def _timed(function):
    started = time.perf_counter()
    result = function()
    return time.perf_counter() - started, result


def _line(label: str, before_paint: float, before_all: float, after_paint: float, after_all: float) -> None:
    print(
        f"  {label:<34} first paint {before_paint:7.2f} s -> {after_paint:6.3f} s ({before_paint / after_paint:6.0f}×)"
        f"   complete {before_all:7.2f} s -> {after_all:6.3f} s ({before_all / after_all:6.0f}×)"
    )


# --- demo ------------------------------------------------------------------------------------------


def demo(args) -> None:
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.urls import reverse

    from annotation.services.demo import demo_load
    from evaluation.demo.services import demo_results_load
    from evaluation.models import MetricRun, ReportCache, RunStatus
    from evaluation.research.comparisons import comparisons_from_db
    from evaluation.research.correlation import TAU_C_SEED001
    from evaluation.research.reports.cache import report_compute
    from evaluation.research.reports.heatmap import runs_source, trust_heatmap
    from evaluation.research.reports.plots import scatter
    from evaluation.research.reports.render import per_caption_records
    from evaluation.research.reports.report import report_from_db
    from evaluation.research.tables import PER_CAPTION_COLUMNS, correlation_html, html_table
    from evaluation.research.trust_tables import trust_build, trust_html
    from evaluation.retrieval.selectors import clip_trust_for_runs

    started = time.perf_counter()
    demo_load()
    demo_results_load()
    runs = list(
        MetricRun.objects.filter(status=RunStatus.SUCCEEDED)
        .order_by("language__code", "-pk")
        .values_list("pk", flat=True)
    )
    print(
        f"demo loaded in {time.perf_counter() - started:.1f} s: {len(runs)} finished metric runs ({connection.vendor})"
    )

    def before_paint():
        report = report_from_db(metric_run_ids=runs, tau_c=TAU_C_SEED001)
        correlation_html(report.correlations)
        if report.trust is not None:
            trust_html(report.trust, report.clip_flagged)
        if report.per_caption:
            html_table(per_caption_records(report), PER_CAPTION_COLUMNS)
        return report

    def before_figures(report):
        # The old figure views: each recomputed its comparisons, the heatmap also the trust table.
        comparisons = comparisons_from_db(metric_run_ids=runs, n_boot=1)
        trust = trust_build(comparisons.items, clip_trust=clip_trust_for_runs(report.runs))
        if trust.table is not None:
            trust_heatmap(trust.table, "svg", source=runs_source(report.runs), clip_flags=trust.clip_flags)
        for metric in report.metrics:
            scatter(comparisons_from_db(metric_run_ids=runs, n_boot=1), metric, fmt="svg")

    paint, report = _timed(before_paint)
    figures, _ = _timed(lambda: before_figures(report))

    user = get_user_model().objects.create_superuser("bench", "bench@example.org", "x")
    client = Client()
    client.force_login(user)
    url = reverse("reports:report")

    def page_and_figures():
        page = client.get(url).content.decode()
        links = sorted(
            {part.split('"')[0] for part in page.split('src="')[1:] if "/reports/" in part.split('"')[0]}
        )
        for link in links:
            response = client.get(link.replace("&amp;", "&"))
            assert response.status_code == 200, (link, response.status_code)
        return page, links

    # Cold: nothing stored, a real broker's worker would compute it (not eager: the task is only queued).
    settings.CELERY_TASK_ALWAYS_EAGER = False
    with mock.patch("evaluation.research.reports.tasks.report_compute_task.delay"):
        cold, response = _timed(lambda: client.get(url))
    assert 'id="computing"' in response.content.decode()
    entry = ReportCache.objects.get()
    background, _ = _timed(lambda: report_compute(cache_id=entry.pk))
    settings.CELERY_TASK_ALWAYS_EAGER = True
    client.get(url)  # first read of the stored row (connection and template caches warm)
    warm_paint, (page, links) = _timed(lambda: (client.get(url).content.decode(), None))
    warm_all, (page, links) = _timed(page_and_figures)
    assert 'id="trust-table"' in page
    print(
        f"demo: {len(report.comparisons)} comparisons, {len(report.items)} items, {len(report.metrics)} metrics, "
        f"{len(links)} figures on the page"
    )
    _line("demo (per request -> stored)", paint, paint + figures, warm_paint, warm_all)
    print(
        f"  {'demo, nothing stored yet':<34} first paint {cold:.3f} s (the page says what it computes; "
        f"the worker's computation, once: {background:.2f} s)"
    )


# --- synthetic XM3600-size selection ----------------------------------------------------------------


def synthetic(args):
    from evaluation.research.correlation import Comparison
    from evaluation.research.meta_evaluation import Item

    rng = np.random.default_rng(0)
    languages = [f"l{n:02d}" for n in range(args.languages)]
    pairs = [(a, b) for i, a in enumerate(SYSTEMS) for b in SYSTEMS[i + 1 :]]
    quality = {s: q for s, q in zip(SYSTEMS, (0.0, 0.3, 0.5, 0.8))}
    comparisons, items = [], []
    for language in languages:
        for subset in range(4):
            for m1, m2 in pairs:
                base, test = f"{m1}-{subset}", f"{m2}-{subset}"
                humans = rng.normal(quality[m2] - quality[m1], 1.5, args.images).clip(-3, 3).round(1)
                deltas = {
                    metric: humans * 0.05 + rng.normal(0, 0.1 + 0.02 * k, args.images)
                    for k, metric in enumerate(METRICS)
                }
                for i in range(args.images):
                    items.append(
                        Item(
                            language,
                            base,
                            test,
                            f"{language}-{subset}-{i}",
                            float(humans[i]),
                            3,
                            {metric: float(deltas[metric][i]) for metric in METRICS},
                        )
                    )
                wins, losses = float((humans > 0.5).mean()), float((humans < -0.5).mean())
                comparisons.append(
                    Comparison(
                        base,
                        test,
                        language,
                        100 * (wins - losses),
                        {m: float(deltas[m].mean()) for m in METRICS},
                    )
                )
    return comparisons, items


@contextmanager
def reference_implementation():
    """The computation as it was before it was vectorised: each permutation draw's two hybrids sorted
    row by row, each bootstrap resample's Kendall τ counted pair by pair and its Spearman ranked by
    scipy, each acc23 resample's count by two cumulative sums over every item (the functions are kept
    beside the new ones, which must give the same numbers)."""
    from evaluation.research import bootstrap
    from evaluation.research.meta_evaluation import acc23, significance

    with (
        mock.patch.object(significance, "_permutation_sig_diff", significance._permutation_sig_diff_sorted),
        mock.patch.object(bootstrap, "_MAX_COUNTED_POINTS", 0),
        mock.patch.object(acc23, "_bootstrap_best", acc23._bootstrap_best_cumulative),
    ):
        yield


def one_language_changed(comparisons, items, language):
    """The selection after a new metric run in ``language``: every Δmetric of its items and
    comparisons moved, the other languages as they were."""
    from dataclasses import replace

    def moved(deltas):
        return {m: v + 0.01 * (k + 1) for k, (m, v) in enumerate(deltas.items())}

    return (
        [replace(c, deltas=moved(c.deltas)) if c.language == language else c for c in comparisons],
        [replace(i, deltas=moved(i.deltas)) if i.language == language else i for i in items],
    )


class CountingStore(dict):
    """A piece store that counts what is written (the languages computed)."""

    def __init__(self, inner):
        super().__init__()
        self.inner, self.written = inner, []

    def get(self, key, default=None):
        return self.inner.get(key, default)

    def __setitem__(self, key, value):
        self.written.append(value.language)
        self.inner[key] = value


def trust_profile(comparisons, items, top: int) -> None:
    import cProfile
    import pstats

    from evaluation.research.trust_tables import trust_build

    profiler = cProfile.Profile()
    profiler.runcall(lambda: trust_build(items, comparisons))
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(top)


def xm3600(args) -> None:
    from django.template.loader import render_to_string

    from evaluation.models import ReportCache, ReportCacheState, ReportPiece
    from evaluation.research.reports.cache import figure_bytes, payload_load
    from evaluation.research.reports.heatmap import trust_heatmap
    from evaluation.research.reports.pieces import report_pieces
    from evaluation.research.reports.plots import scatter
    from evaluation.research.reports.report import Report
    from evaluation.research.reports.views import ReportForm
    from evaluation.research.tables import correlation_html
    from evaluation.research.trust_tables import trust_build, trust_html

    comparisons, items = synthetic(args)
    print(
        f"XM3600-size: {args.languages} languages, {len(comparisons)} comparisons ({len(comparisons) // args.languages} "
        f"per language), {len(items)} items, {len(METRICS)} metrics"
    )
    if args.profile:
        with reference_implementation() if args.profile == "before" else nullcontext():
            trust_profile(comparisons, items, top=40)

    # The computation a report runs once per selection content (in a worker, not per request).
    changed_comparisons, changed_items = one_language_changed(comparisons, items, "l00")
    if args.before:
        with reference_implementation():
            before_whole, before = _timed(lambda: trust_build(items, comparisons))
    now_whole, now = _timed(lambda: trust_build(items, comparisons))
    if args.before:
        assert now == before, "the vectorised computation must give the reference's numbers"
    ReportPiece.objects.all().delete()
    store = CountingStore(report_pieces())
    after_whole, stored = _timed(lambda: trust_build(items, comparisons, pieces=store))
    assert stored == now and sorted(store.written) == sorted({i.language for i in items})
    store.written.clear()
    after_one, changed = _timed(lambda: trust_build(changed_items, changed_comparisons, pieces=store))
    assert store.written == ["l00"], store.written
    assert changed == trust_build(changed_items, changed_comparisons), "pieces must give the same numbers"
    print("  trust table and model level (bootstrap, permutation tests, soft pairwise accuracy), one worker:")
    if args.before:
        print(
            f"    {'whole selection':<34} before {before_whole:8.1f} s -> vectorised {now_whole:6.1f} s "
            f"({before_whole / now_whole:5.1f}×), with the pieces stored {after_whole:6.1f} s"
        )
        print(
            f"    {'one language changed (l00)':<34} before {before_whole:8.1f} s (all of it again) -> "
            f"{after_one:6.2f} s ({before_whole / after_one:5.0f}×): l00 and the pooled column"
        )
    else:
        print(f"    {'whole selection':<34} {now_whole:6.1f} s, with the pieces stored {after_whole:6.1f} s")
        print(f"    {'one language changed (l00)':<34} {after_one:6.2f} s: l00 and the pooled column")
    print("    (the same numbers on each side: checked)")
    trust = now
    paint = now_whole + _timed(lambda: (correlation_html(trust.system), trust_html(trust.table)))[0]

    def figures():
        out = {"heatmap.svg": trust_heatmap(trust.table, "svg")}
        for metric in METRICS:
            out[f"scatter:{metric}.svg"] = scatter(comparisons, metric, fmt="svg")
        return out

    figure_time, drawn = _timed(figures)
    # Old figure views recomputed the trust table for the heatmap (the scatter plots only their comparisons).
    before_all = paint + figure_time + paint

    report = Report(
        comparisons=comparisons,
        correlations=trust.system,
        both_directions=True,
        n_boot=1000,
        seed=0,
        source="synthetic",
        items=items,
        trust=trust.table,
        table1=[],
        table2=[],
        sxs_rows=[],
    )
    import pickle

    entry = ReportCache.objects.create(
        key="bench-xm3600",
        selection_key="bench-xm3600",
        kind="report",
        state=ReportCacheState.DONE,
        payload=pickle.dumps(report),
    )
    for name, data in drawn.items():
        figure_bytes(entry, name, lambda data=data: data)

    def after_paint():
        row = ReportCache.objects.get(key="bench-xm3600")
        stored = payload_load(row)
        context = {
            "form": ReportForm(),
            "report": stored,
            "has_runs": True,
            "query": "",
            "correlations": correlation_html(stored.correlations),
            "trust": trust_html(stored.trust),
            "metrics": stored.metrics,
            "notes": stored.notes(),
            "demo_metrics": [],
            "csrf_token": "bench",
        }
        return row, render_to_string("evaluation/report.html", context)

    after_paint(), after_paint()  # template and connection warm, as on a running server
    paint_after, (row, html) = _timed(after_paint)

    def after_all():
        row, html = after_paint()
        for name in drawn:
            bytes(row.figures.get(name=name).data)
        return html

    all_after, html = _timed(after_all)
    assert 'id="trust-table"' in html
    print(f"  figures drawn once: {figure_time:.2f} s (heatmap and {len(METRICS)} scatter plots)")
    _line("XM3600-size (per request -> stored)", paint, before_all, paint_after, all_after)
    print(
        "  (per request: the vectorised computation; complete: the heatmap's recomputation of the trust "
        "table counted as a second first paint)"
    )
    print(
        f"  stored row: {len(bytes(row.payload)) / 1e6:.1f} MB pickled report, {len(drawn)} figures "
        f"({sum(map(len, drawn.values())) / 1e6:.1f} MB)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=25, help="judged images per comparison (synthetic)")
    parser.add_argument("--languages", type=int, default=36)
    parser.add_argument("--skip-demo", action="store_true")
    parser.add_argument("--skip-xm3600", action="store_true")
    parser.add_argument(
        "--no-before",
        dest="before",
        action="store_false",
        help="skip the reference implementation (22 minutes at 36 languages x 25 images)",
    )
    parser.add_argument(
        "--profile",
        choices=("before", "after"),
        help="print a cProfile of the XM3600-size trust computation (reference or vectorised) first",
    )
    args = parser.parse_args()
    setup_test_environment()
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        if not args.skip_demo:
            demo(args)
        if not args.skip_xm3600:
            xm3600(args)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
