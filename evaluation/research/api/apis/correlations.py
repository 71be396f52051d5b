"""Correlation of metrics with side-by-side judgments, and which metric to trust per language."""

from __future__ import annotations

from drf_spectacular.utils import (
    extend_schema,
)
from rest_framework import serializers
from rest_framework.response import Response

from core.errors import ValidationFailed
from evaluation.research.api.apis.base import ERRORS, ResearchApi
from evaluation.research.api.serializers import (
    ComparisonFilterSerializer,
    CorrelationsSerializer,
    TrustSerializer,
)
from evaluation.research.meta_evaluation import (
    ACC23_LABEL,
    DEFAULT_SIGNIFICANCE_TEST,
    MIN_ITEMS,
    SIGNIFICANCE_LEVEL,
)
from evaluation.research.reports.cache import result_or_compute
from evaluation.research.reports.stored import API_CORRELATIONS, API_TRUST, api_selection
from evaluation.research.trust_tables import trust_languages, trust_records


def _draws(params: dict) -> dict:
    """The random draws a selection's numbers were made with, as both endpoints report them."""
    return {key: params[key] for key in ("n_boot", "n_permutations", "seed")}


def _stored_result(kind, params: dict, **selection):
    """``(comparisons found, result, demo metrics)`` of the selection ``params``, computed once per
    selection content and stored (evaluation.research.reports.cache); ValidationFailed with the
    builder's message when the selection has no result."""
    found, result, demo = result_or_compute(kind, api_selection(params, **selection))
    if isinstance(result, str):
        raise ValidationFailed(result)
    return found, result, demo


# --- Correlation of metrics with side-by-side judgments ----------------------------------------------


class CorrelationApi(ResearchApi):
    class FilterSerializer(ComparisonFilterSerializer):
        one_direction = serializers.BooleanField(
            required=False,
            default=False,
            help_text="Count each comparison once instead of in both directions.",
        )

    @extend_schema(
        summary="Correlation of metrics with ΔS×S",
        description=(
            "One comparison per side-by-side campaign (m1, m2, language): ΔS×S from the campaign and, per "
            "metric, Δmetric = score(m2) − score(m1) from the corpus scores of one of the given runs in that "
            "language; when several runs score the same pair with a metric, the run given first is used and "
            "the others are listed in `skipped`. The same builder serves the report page and the `report` "
            "command. Pearson, Spearman, Kendall τ_b and τ_c per language and over all (`all`); each "
            "comparison counts in both directions unless `one_direction=true`. With them, the pairwise "
            "accuracy and, from the judgments and per-caption scores behind each comparison, the soft "
            "pairwise accuracy (WMT24)."
        ),
        parameters=[FilterSerializer],
        responses={200: CorrelationsSerializer, **ERRORS},
    )
    def get(self, request):
        params = self.validated(self.FilterSerializer, request.query_params)
        both = not params["one_direction"]
        found, results, demo = _stored_result(API_CORRELATIONS, params, both_directions=both)
        output = {
            "both_directions": both,
            **_draws(params),
            "comparisons": found.sources,
            "skipped": found.skipped,
            "results": results,
            "demo_metrics": demo,
        }
        return Response(CorrelationsSerializer(output).data)


# --- Which metric to trust ---------------------------------------------------------------------------


NO_COMPARISON = (
    "No comparison in this selection: nothing judged yet, or no given run scores both systems of a "
    "campaign (see `skipped`)."
)
NO_ITEM = (
    "No item: the runs have no per-caption scores of both systems on the judged images (see `skipped`), "
    "and the table is made of them."
)


class TrustApi(ResearchApi):
    class FilterSerializer(ComparisonFilterSerializer):
        """No ``one_direction``: neither the item level nor the pairwise accuracies depend on it."""

    @extend_schema(
        summary="Which metric to trust, language by language",
        description=(
            "The comparisons of `/api/correlations/` (same selection), judged the way the WMT metrics task "
            "does. Item level: one item per judged image of a compared pair (people's mean score from m2's "
            "side against metric(m2's caption) − metric(m1's caption)); per metric and language (and `all`, "
            "every item pooled) acc23 with tie calibration, its 95% bootstrap interval over items and its "
            "significance cluster (paired permutation tests between metrics, as mt-metrics-eval's "
            "PermutationSigDiff and AssignRanks). Model level, in the same cells: pairwise accuracy and soft "
            "pairwise accuracy. A language with fewer than `min_items` items gets no test; one whose items "
            "cannot tell the metrics apart says so. Without an item (nothing judged, or no per-caption "
            "scores) the cells are empty and `note` says why."
        ),
        parameters=[FilterSerializer],
        responses={200: TrustSerializer, **ERRORS},
    )
    def get(self, request):
        params = self.validated(self.FilterSerializer, request.query_params)
        found, trust, demo = _stored_result(API_TRUST, params)
        table = trust.table
        output = {
            "measure": ACC23_LABEL,
            **_draws(params),
            "alpha": SIGNIFICANCE_LEVEL,
            "significance_test": table.significance_test if table else DEFAULT_SIGNIFICANCE_TEST,
            "min_items": MIN_ITEMS,
            "metrics": list(table.metrics) if table else [],
            "languages": trust_languages(table) if table else {},
            "cells": trust_records(trust, demo) if table else [],
            "demo_metrics": demo,
            "clip_flags": trust.clip_flags,
            "skipped": found.skipped,
            "note": "" if table else (NO_ITEM if len(found) else NO_COMPARISON),
        }
        return Response(TrustSerializer(output).data)
