"""Reads of retrieval checks, and the per-language verdict on a CLIP model that every page shows."""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.db.models import QuerySet

from core.lookups import row_by_id
from evaluation.clip_checks.selectors import probe_ratios
from evaluation.metrics.clip.trust import (
    LanguageTrust,
    clip_model_key,
    language_trust,
    not_checked,
    with_probes,
)
from evaluation.models import CLIP_METRICS, MetricRun, RetrievalCheck, RunStatus


def retrieval_check_queryset() -> QuerySet[RetrievalCheck]:
    return RetrievalCheck.objects.select_related("created_by").prefetch_related("campaigns", "reference_sets")


def retrieval_check_get(*, check_id: int) -> RetrievalCheck:
    return row_by_id(retrieval_check_queryset(), check_id, "retrieval check")


def check_trust(check: RetrievalCheck) -> dict[str, LanguageTrust]:
    """The verdict of each language of one finished check, under ``CLIP_UNRELIABLE_R1_RATIO``."""
    return language_trust(check.results or {}, threshold=settings.CLIP_UNRELIABLE_R1_RATIO, check_id=check.pk)


def run_model_key(run: MetricRun) -> str | None:
    """The CLIP model a run's CLIPScore / RefCLIPScore came from (None for a run without CLIP metrics)."""
    params = run.params or {}
    if not set(run.metrics or ()) & set(CLIP_METRICS) or "clip_model" not in params:
        return None
    return clip_model_key(
        model=params["clip_model"],
        pretrained=params.get("clip_pretrained", ""),
        checkpoint=params.get("clip_checkpoint", ""),
        model_id=(run.timings or {}).get("clip_model_id", ""),
    )


def latest_checks(model_key: str) -> dict[str, RetrievalCheck]:
    """Language -> the latest succeeded check of this model that has the language."""
    out: dict[str, RetrievalCheck] = {}
    for check in RetrievalCheck.objects.filter(model_key=model_key, status=RunStatus.SUCCEEDED).order_by(
        "-finished_at", "-pk"
    ):
        for code in check.results or {}:
            out.setdefault(code, check)
    return out


def clip_trust(model_key: str, languages: Iterable[str]) -> dict[str, LanguageTrust]:
    """Language -> its verdict for the model from its latest retrieval check ("not checked" without
    one), joined with its latest zero-shot and foil checks: any probe below its threshold flags it."""
    languages = list(languages)
    checks = latest_checks(model_key)
    probes = probe_ratios(model_key, languages)
    out = {}
    for code in languages:
        check = checks.get(code)
        verdict = check_trust(check)[code] if check is not None else not_checked(code, model_key)
        out[code] = with_probes(verdict, probes[code])
    return out


def clip_trust_for_runs(runs: Iterable[MetricRun]) -> dict[str, LanguageTrust]:
    """Language -> the verdict for the CLIP model of the CLIP runs in that language (the first such
    run of a language decides, as the report takes a language's deltas from the first run listed)."""
    by_language: dict[str, str] = {}
    for run in runs:
        key = run_model_key(run)
        if key is not None:
            by_language.setdefault(run.language.code, key)
    out: dict[str, LanguageTrust] = {}
    for key in dict.fromkeys(by_language.values()):
        codes = [code for code, k in by_language.items() if k == key]
        out |= clip_trust(key, codes)
    return dict(sorted(out.items()))


def run_clip_trust(run: MetricRun) -> LanguageTrust | None:
    """The verdict for a CLIP run's language (None for a run without CLIP metrics)."""
    key = run_model_key(run)
    return None if key is None else clip_trust(key, [run.language.code])[run.language.code]
