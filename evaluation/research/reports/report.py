"""A research report: the correlation of each metric with the side-by-side judgments, the
comparisons behind it and what was left out, Tables 1 and 2, the side-by-side rows and the
per-caption agreement.

:func:`report_from_db` reads comparisons from side-by-side campaigns and metric runs
(:mod:`.comparisons`); :func:`report_from_comparisons` takes comparisons entered by hand (a paper's
table), without the database tables. :mod:`.render` shows a report and writes its files.

Fewer than 3 comparisons (in all or in a language) give no coefficient (None, "n/a"): the report
says so first (:meth:`Report.notes`) and still has its plots and tables.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.utils import timezone

from annotation.models import Campaign
from evaluation.human.quality import QualityRow
from evaluation.human.selectors import REAL_PAIRS, caption_statistics_rows, quality_rows, sxs_table_rows
from evaluation.human.statistics import CaptionStatsRow
from evaluation.human.sxs import DEFAULT_N_BOOT
from evaluation.metrics.clip.tiny import TINY_CLIP_NAME
from evaluation.metrics.clip.trust import FLAG_TEXT, LanguageTrust
from evaluation.models import ALL_METRICS, CLIP_METRICS, ClipModel, MetricRun, RunStatus
from evaluation.research.caption_rows import PerCaptionRow, per_caption_agreement_from_rows, per_caption_rows
from evaluation.research.comparisons import (
    ComparisonSource,
    Skipped,
    comparisons_from_db,
    metric_runs_for_report,
)
from evaluation.research.correlation import (
    CORRELATION_N_BOOT,
    MIN_COMPARISONS,
    TAU_C_SEED001,
    Comparison,
    CorrelationResult,
    correlate,
)
from evaluation.research.finetune_tables import (
    before_after,
    before_after_rows,
    before_after_text,
    config_items,
    delta_text,
    score_text,
)
from evaluation.research.meta_evaluation import (
    DEFAULT_N_PERMUTATIONS,
    Item,
    TrustTable,
)
from evaluation.research.per_caption import per_caption_tau_c_label, tau_c_variant_check
from evaluation.research.pieces import PieceStore
from evaluation.research.reports.pieces import report_pieces
from evaluation.research.reports.plots import metric_names
from evaluation.research.tables import demo_note
from evaluation.research.trust_tables import trust_build
from evaluation.retrieval.selectors import clip_trust_for_runs

__all__ = [
    "FLAG_TEXT",
    "Report",
    "canonical_metric_names",
    "report_from_comparisons",
    "report_from_db",
]


@dataclass
class FineTuneSection:
    """A fine-tuned CLIP model behind some of the report's CLIP runs, and how it compares with its base
    model on the test split of its fine-tuning run (per language; :mod:`evaluation.research.finetune_tables`)."""

    model: str
    run_id: int
    is_demo: bool
    base_model_id: str
    table: dict[str, dict[str, Any]]
    config: dict[str, Any] = field(default_factory=dict)
    history: list[dict[str, Any]] = field(default_factory=list)
    dev_score: float | None = None

    @property
    def rows(self) -> list[list[str]]:
        return before_after_rows(self.table)

    @property
    def deltas(self) -> list[tuple[str, str]]:
        """(language, "+0.052 [+0.010, +0.094]" or why there is none) per language."""
        return [(code, delta_text(entry)) for code, entry in self.table.items()]

    @property
    def config_items(self) -> list[tuple[str, str]]:
        return config_items(self.config)

    @property
    def dev_score_text(self) -> str:
        return score_text(self.dev_score)

    @property
    def text(self) -> str:
        return f"Fine-tuned CLIP model “{self.model}” (run #{self.run_id}, base {self.base_model_id})\n" + (
            before_after_text(self.table, demo=self.is_demo)
        )


def fine_tune_sections(runs: Sequence[MetricRun], *, n_boot: int, seed: int) -> list[FineTuneSection]:
    """The before/after tables of the fine-tuned models the CLIP runs among ``runs`` used, by model name."""
    names = {
        run.params.get("clip_registered")
        for run in runs
        if run.params.get("clip_registered") and set(run.metrics or []) & set(CLIP_METRICS)
    }
    models = ClipModel.objects.filter(name__in=names, fine_tune__status=RunStatus.SUCCEEDED).select_related(
        "fine_tune"
    )
    return [
        FineTuneSection(
            model=model.name,
            run_id=model.fine_tune.pk,
            is_demo=model.is_demo,
            base_model_id=model.base_model_id,
            table=before_after(model.fine_tune.results.get("test", []), n_boot=n_boot, seed=seed),
            config=dict(model.fine_tune.config or {}),
            history=list(model.fine_tune.history or []),
            dev_score=model.fine_tune.dev_score,
        )
        for model in models.order_by("name")
    ]


def _demo_run(params: dict, demo_names: set, demo_weights: set) -> bool:
    """A run's CLIP model is a demo or untrained one: a registered model marked ``is_demo``, the same
    weights given through the settings instead, or the tiny random architecture itself."""
    return (
        params.get("clip_registered") in demo_names
        or (params.get("clip_model"), params.get("clip_checkpoint") or "") in demo_weights
        or params.get("clip_model") == TINY_CLIP_NAME
    )


def demo_metrics_of(runs: Sequence[MetricRun]) -> list[str]:
    """The CLIP metrics of ``runs`` scored by a demo or untrained model (the registry's ``is_demo``:
    the demo's tiny random model and what is fine-tuned from it), sorted."""
    clip_runs = [run for run in runs if set(run.metrics or []) & set(CLIP_METRICS)]
    if not clip_runs:
        return []
    demo = list(ClipModel.objects.filter(is_demo=True).values_list("name", "model_name", "checkpoint"))
    names = {name for name, _, _ in demo}
    weights = {(model_name, checkpoint) for _, model_name, checkpoint in demo if checkpoint}
    return sorted(
        {
            metric
            for run in clip_runs
            if _demo_run(run.params or {}, names, weights)
            for metric in run.metrics
            if metric in CLIP_METRICS
        }
    )


def canonical_metric_names(comparisons: Sequence[Comparison]) -> list[Comparison]:
    """The comparisons with metric names spelt as the platform spells them (``cider-d`` -> ``CIDEr-D``).

    A comparisons CSV's headers are read lowercased; names that are not platform metrics stay as
    they are.
    """
    by_lower = {name.lower(): name for name in ALL_METRICS}
    return [
        Comparison(
            m1=c.m1,
            m2=c.m2,
            language=c.language,
            delta_sxs=c.delta_sxs,
            deltas={by_lower.get(name.lower(), name): value for name, value in c.deltas.items()},
        )
        for c in comparisons
    ]


@dataclass
class Report:
    """Everything a report shows. The DB tables are None for a report from entered comparisons."""

    comparisons: list[Comparison]
    correlations: dict[str, dict[str, CorrelationResult]]
    both_directions: bool
    n_boot: int
    seed: int
    source: str  # where the comparisons come from, one line
    created_at: datetime = field(default_factory=timezone.now)
    skipped: list[Skipped] = field(default_factory=list)
    sources: list[ComparisonSource] = field(default_factory=list)
    runs: list[MetricRun] = field(default_factory=list)
    table1: list[CaptionStatsRow] | None = None
    table2: list[QualityRow] | None = None
    sxs_rows: list[dict[str, Any]] | None = None
    per_caption_rows: list[PerCaptionRow] | None = None
    per_caption: dict[str, dict[str, dict[str, Any]]] | None = None
    per_caption_notes: list[str] = field(default_factory=list)
    tau_c: str = TAU_C_SEED001  # the per-caption τ_c: "seed001" or "scipy"
    # The item level (images of the compared pairs) and its verdict; None for entered comparisons.
    items: list[Item] = field(default_factory=list)
    trust: TrustTable | None = None
    n_permutations: int = DEFAULT_N_PERMUTATIONS
    # Language -> the verdict of a retrieval check on the CLIP model of the selected CLIP runs.
    clip_trust: dict[str, LanguageTrust] = field(default_factory=dict)
    # The fine-tuned CLIP models the selected CLIP runs used: their before/after tables on their test splits.
    fine_tunes: list[FineTuneSection] = field(default_factory=list)
    # Metrics scored by a demo or untrained model: tagged "demo model — not results" wherever shown.
    demo_metrics: list[str] = field(default_factory=list)

    @property
    def clip_flagged(self) -> list[str]:
        """Languages whose CLIPScore / RefCLIPScore the retrieval check flags as unreliable."""
        return sorted(code for code, verdict in self.clip_trust.items() if verdict.flagged)

    def clip_notes(self) -> list[str]:
        """One sentence per flagged language, then one for the languages not checked."""
        out = [
            f"CLIPScore and RefCLIPScore, {verdict.note}"
            for verdict in self.clip_trust.values()
            if verdict.flagged
        ]
        unchecked = sorted(code for code, v in self.clip_trust.items() if not v.flagged and not v.trusted)
        if unchecked:
            out.append(
                f"CLIPScore and RefCLIPScore in {', '.join(unchecked)}: the CLIP model has no retrieval check "
                "against English there, so those scores are unchecked (not trusted)."
            )
        return out

    @property
    def tau_c_label(self) -> str:
        """The per-caption τ_c as outputs name it, e.g. "seed-001 (m=4)"."""
        return per_caption_tau_c_label(self.tau_c)

    @property
    def metrics(self) -> list[str]:
        return metric_names(self.comparisons)

    @property
    def from_database(self) -> bool:
        return self.table1 is not None

    def notes(self) -> list[str]:
        """What a reader must know before reading the numbers: too few comparisons, what was left out."""
        out = []
        n = len(self.comparisons)
        per_language = Counter(c.language for c in self.comparisons)
        if n == 0:
            out.append("No comparison: nothing to correlate (see what was left out below).")
        elif n < MIN_COMPARISONS:
            out.append(
                f"Only {n} comparison{'s' if n != 1 else ''}: a correlation needs at least {MIN_COMPARISONS} "
                "comparisons, so every coefficient is n/a. The plots and tables are written all the same."
            )
        else:
            few = sorted(lang for lang, count in per_language.items() if count < MIN_COMPARISONS)
            if few:
                out.append(
                    f"Fewer than {MIN_COMPARISONS} comparisons in {', '.join(few)}: no coefficient for "
                    f"{'that language' if len(few) == 1 else 'those languages'} (n/a); they still count in “all”."
                )
        if self.trust is not None:
            out.extend(
                f"Trust table, {code}: {verdict.note}"
                for code, verdict in self.trust.languages.items()
                if verdict.note
            )
        if self.demo_metrics:
            out.append(demo_note(self.demo_metrics))
        out.extend(self.clip_notes())
        out.extend(self._mixed_signatures())
        out.extend(f"Left out: {item}" for item in self.skipped)
        out.extend(f"Per caption: {note}" for note in self.per_caption_notes)
        return out

    def _mixed_signatures(self) -> list[str]:
        """A metric whose deltas come from runs with different signatures mixes incomparable numbers."""
        out = []
        for metric in self.metrics:
            found = sorted({s.signatures[metric] for s in self.sources if metric in s.signatures})
            if len(found) > 1:
                out.append(
                    f"Δ {metric} comes from runs with different signatures (numbers computed differently): "
                    + "; ".join(found)
                )
        return out


def _correlate(comparisons: list[Comparison], *, both_directions: bool, n_boot: int, seed: int):
    return correlate(comparisons, both_directions=both_directions, n_boot=n_boot, seed=seed)


def report_from_comparisons(
    comparisons: Sequence[Comparison],
    *,
    both_directions: bool = True,
    n_boot: int = CORRELATION_N_BOOT,
    seed: int = 0,
    source: str = "comparisons entered by hand",
) -> Report:
    """A report over entered comparisons (no database tables). Raises ``ValueError`` like
    :func:`evaluation.research.correlation.correlate` (a pair entered twice, a model against itself, ...)."""
    comparisons = list(comparisons)
    return Report(
        comparisons=comparisons,
        correlations=_correlate(comparisons, both_directions=both_directions, n_boot=n_boot, seed=seed),
        both_directions=both_directions,
        n_boot=n_boot,
        seed=seed,
        source=source,
    )


def report_from_db(
    *,
    metric_run_ids: Sequence[int],
    campaign_ids: Sequence[int] | None = None,
    language_codes: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
    both_directions: bool = True,
    n_boot: int = CORRELATION_N_BOOT,
    seed: int = 0,
    transfer_ratings: bool = False,
    per_caption: bool = True,
    sxs_n_boot: int = DEFAULT_N_BOOT,
    tau_c: str = TAU_C_SEED001,
    n_permutations: int = DEFAULT_N_PERMUTATIONS,
    human_tables: bool = True,
    pieces: PieceStore | None = None,
) -> Report:
    """A report over the side-by-side campaigns (all, or ``campaign_ids``; in ``language_codes``)
    and the metric runs ``metric_run_ids``, with Tables 1 and 2 of those languages (all when not
    given), the campaigns' side-by-side rows and, when the runs score rated captions, the per-caption
    agreement (``transfer_ratings``: see :func:`evaluation.research.caption_rows.per_caption_rows`),
    its τ_c seed 001's (``tau_c="seed001"``, m = the rating scale's 4 points) or scipy's (``"scipy"``),
    and the item level: the soft pairwise accuracy of each metric and the trust table
    (:mod:`evaluation.research.meta_evaluation`, ``n_permutations`` draws per permutation test).

    ``pieces``: where each language's part of the trust table and model level is kept (default: the
    database's, :mod:`.pieces`), so that a language whose data did not change is read, not computed.
    ``human_tables=False`` leaves Tables 1 and 2 out (the stored report reads them per request: they
    cover every caption, not the selection). Reads only. Raises what :func:`.comparisons.comparisons_from_db` raises, and ``ValueError`` for
    an unknown ``tau_c``.
    """
    tau_c_variant_check(tau_c)
    comparisons = comparisons_from_db(
        campaign_ids=campaign_ids,
        language_codes=language_codes,
        metric_run_ids=metric_run_ids,
        metrics=metrics,
        n_boot=sxs_n_boot,
    )
    runs = metric_runs_for_report(metric_run_ids)
    languages = set(language_codes or ())

    def keep(rows):
        return [row for row in rows if not languages or row.language in languages]

    campaign_order = [s.campaign_id for s in comparisons.sources]
    campaign_order += [s.campaign_id for s in comparisons.skipped if not s.metrics]
    correlated = {s.campaign_id for s in comparisons.sources}
    sxs_rows = []
    for campaign_id in dict.fromkeys(campaign_order):
        for row in sxs_table_rows(campaign_id=campaign_id, n_boot=sxs_n_boot):
            sxs_rows.append(
                {
                    **row,
                    "campaign_id": campaign_id,
                    "correlated": campaign_id in correlated and row["subset"] == REAL_PAIRS,
                }
            )
    states = dict(
        Campaign.objects.filter(pk__in=list(correlated) + campaign_order).values_list("pk", "state")
    )
    for row in sxs_rows:
        row["state"] = states.get(row["campaign_id"], "")
    sxs_rows.sort(key=lambda row: (row["language"], row["campaign_id"], row["subset"] != REAL_PAIRS))

    rows = agreement = None
    notes: list[str] = []
    if per_caption:
        found = per_caption_rows(
            metric_run_ids=metric_run_ids,
            language_codes=language_codes,
            metrics=metrics,
            transfer=transfer_ratings,
        )
        notes = found.notes
        if found:
            rows = list(found)
            agreement = per_caption_agreement_from_rows(rows, tau_c=tau_c)

    items = list(comparisons)
    scope = (
        f"campaigns #{', #'.join(map(str, campaign_ids))}"
        if campaign_ids
        else "every finished side-by-side campaign"
    )
    if language_codes:
        scope += f" in {', '.join(language_codes)}"
    clip_trust = clip_trust_for_runs(runs)
    trust = trust_build(
        comparisons.items,
        items,
        clip_trust=clip_trust,
        both_directions=both_directions,
        n_boot=n_boot,
        n_permutations=n_permutations,
        seed=seed,
        pieces=report_pieces() if pieces is None else pieces,
    )
    return Report(
        comparisons=items,
        correlations=trust.system,
        items=comparisons.items,
        trust=trust.table,
        n_permutations=n_permutations,
        both_directions=both_directions,
        n_boot=n_boot,
        seed=seed,
        source=f"database: {scope}; metric runs #{', #'.join(str(run.pk) for run in runs)}",
        skipped=comparisons.skipped,
        sources=comparisons.sources,
        runs=runs,
        table1=keep(caption_statistics_rows()) if human_tables else [],
        table2=keep(quality_rows()) if human_tables else [],
        sxs_rows=sxs_rows,
        per_caption_rows=rows,
        per_caption=agreement,
        per_caption_notes=notes,
        tau_c=tau_c,
        clip_trust=clip_trust,
        fine_tunes=fine_tune_sections(runs, n_boot=n_boot, seed=seed),
        demo_metrics=demo_metrics_of(runs),
    )
