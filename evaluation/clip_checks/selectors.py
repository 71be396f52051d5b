"""Reads of zero-shot and foil checks, and each language's probe ratios to English for the verdict."""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.db.models import QuerySet

from core.errors import ValidationFailed
from core.lookups import row_by_id
from evaluation.clip_checks.measures import foil_compare
from evaluation.metrics.clip.trust import ProbeRatio
from evaluation.models import ClipProbe, ClipProbeCheck, RunStatus

PROBE_NAMES = {ClipProbe.ZEROSHOT: "zero-shot accuracy", ClipProbe.FOIL: "foil accuracy"}


def probe_check_queryset() -> QuerySet[ClipProbeCheck]:
    return ClipProbeCheck.objects.select_related("created_by").defer("pairs")


def probe_check_get(*, check_id: int) -> ClipProbeCheck:
    return row_by_id(probe_check_queryset(), check_id, "zero-shot or foil check")


def latest_probe_checks(model_key: str, probe: str) -> dict[str, ClipProbeCheck]:
    """Language -> the latest succeeded check of this probe and model that has the language."""
    out: dict[str, ClipProbeCheck] = {}
    checks = ClipProbeCheck.objects.filter(
        model_key=model_key, probe=probe, status=RunStatus.SUCCEEDED
    ).defer("pairs")
    for check in checks.order_by("-finished_at", "-pk"):
        for code in check.results or {}:
            out.setdefault(code, check)
    return out


def foil_baseline(check: ClipProbeCheck, code: str) -> float | None:
    """English's foil accuracy on the pairs of ``code`` (stored when the check finished; None without
    English or shared pairs)."""
    return ((check.results or {}).get(code, {}).get("baseline") or {}).get("accuracy")


def probe_ratio(check: ClipProbeCheck, code: str) -> ProbeRatio | None:
    """The probe of one language of one finished check against English on the same check."""
    result = (check.results or {}).get(code)
    if result is None:
        return None
    if check.probe == ClipProbe.ZEROSHOT:
        value, baseline = result.get("top1"), (result.get("baseline") or {}).get("top1")
        threshold = settings.CLIP_UNRELIABLE_ZEROSHOT_RATIO
    else:
        value, baseline = result.get("accuracy"), foil_baseline(check, code)
        threshold = settings.CLIP_UNRELIABLE_FOIL_RATIO
    if value is None:
        return None
    return ProbeRatio(
        probe=PROBE_NAMES[check.probe], value=value, baseline=baseline, threshold=threshold, check_id=check.pk
    )


def probe_ratios(model_key: str, languages: Iterable[str]) -> dict[str, list[ProbeRatio]]:
    """Language -> its ratios from the model's latest zero-shot and foil checks (English's own
    included: its ratio is 1, or it fails when its accuracy is 0)."""
    languages = list(languages)
    out: dict[str, list[ProbeRatio]] = {code: [] for code in languages}
    for probe in (ClipProbe.ZEROSHOT, ClipProbe.FOIL):
        checks = latest_probe_checks(model_key, probe)
        for code in languages:
            ratio = probe_ratio(checks[code], code) if code in checks else None
            if ratio is not None:
                out[code].append(ratio)
    return out


def foil_before_after(*, check_id: int, base_id: int) -> dict:
    """A fine-tuned model's foil check against its base model's on the same pairs, per language and
    phenomenon (:func:`evaluation.clip_checks.measures.foil_compare`). Raises NotFound, and
    ValidationFailed when either is not a finished foil check or they share no language."""
    after, before = probe_check_get(check_id=check_id), probe_check_get(check_id=base_id)
    for check in (after, before):
        if check.probe != ClipProbe.FOIL or check.status != RunStatus.SUCCEEDED:
            raise ValidationFailed(f"Check #{check.pk} is not a finished foil check.")
    shared = [code for code in after.results if code in before.results]
    if not shared:
        raise ValidationFailed(f"Foil checks #{after.pk} and #{before.pk} share no language.")
    n_boot = int(after.params.get("n_boot", settings.CLIP_FOIL_BOOTSTRAP))
    return {
        "check_id": after.pk,
        "base_id": before.pk,
        "model": after.model_label,
        "base_model": before.model_label,
        "languages": {
            code: foil_compare(
                {"pairs": after.pairs.get(code, [])},
                {"pairs": before.pairs.get(code, [])},
                n_boot=n_boot,
                seed=after.pk,
            )
            for code in shared
        },
    }
