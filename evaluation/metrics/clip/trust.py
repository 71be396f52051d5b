"""Per-language trust in a CLIP model: the flag "CLIP-based scores unreliable here".

A language is flagged when its text→image R@1 on a retrieval check (:mod:`.retrieval`) is below
``threshold`` × English's R@1 on the same check (same model, same kind of data), or when another
probe of the model (zero-shot classification, foils: :class:`ProbeRatio`) falls below its own
threshold × English's on the same check (:func:`with_probes`). English is the
baseline because multilingual CLIP models are trained mostly on English pairs and are at their
best there (seed 004, Table 11); a relative threshold makes the flag independent of how hard a
data set is. A language with no check is "not checked", a checked language whose check has no
English is "not compared": neither is ever reported as trusted.

Plain Python, no Django: the callers read the checks from the database and pass the results in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from core.records import attributes

__all__ = [
    "BASELINE_LANGUAGE",
    "FLAG_TEXT",
    "LanguageTrust",
    "TrustStatus",
    "ProbeRatio",
    "clip_model_key",
    "language_trust",
    "not_checked",
    "with_probes",
]

BASELINE_LANGUAGE = "en"
FLAG_TEXT = "CLIP-based scores unreliable here"
# The recall the flag compares: text→image R@1, the measure seed 004 relates to zero-shot quality.
FLAG_MEASURE = "t2i_r1"

_CHECKPOINT_HASH = re.compile(r"sha256-([0-9a-f]{16})")


class TrustStatus:
    UNRELIABLE = "unreliable"
    RELIABLE = "reliable"
    BASELINE = "baseline"
    NOT_COMPARED = "not_compared"
    NOT_CHECKED = "not_checked"


_LABELS = {
    TrustStatus.UNRELIABLE: FLAG_TEXT,
    TrustStatus.RELIABLE: "CLIP checked: retrieval comparable to English",
    TrustStatus.BASELINE: "CLIP checked: the English baseline",
    TrustStatus.NOT_COMPARED: "CLIP checked without English: not compared",
    TrustStatus.NOT_CHECKED: "CLIP not checked in this language",
}


@dataclass(frozen=True)
class LanguageTrust:
    """The verdict for one language; ``note`` is one sentence with the numbers behind it."""

    language: str
    status: str
    r1: float | None = None
    baseline_r1: float | None = None
    threshold: float | None = None
    check_id: int | None = None
    note: str = ""
    probes: tuple[ProbeRatio, ...] = ()

    @property
    def reasons(self) -> list[str]:
        """Why the language is flagged, one short phrase a probe ("zero-shot accuracy 0.21× English")."""
        if not self.flagged:
            return []
        out = []
        checked = self.r1 is not None and self.threshold is not None and self.baseline_r1 is not None
        if checked and (self.baseline_r1 == 0 or self.r1 < self.threshold * self.baseline_r1):
            out.append(f"text→image R@1 {_ratio_text(self.ratio)} {BASELINE_LANGUAGE_NAME}")
        return out + [probe.reason for probe in self.probes if probe.failed]

    @property
    def flagged(self) -> bool:
        return self.status == TrustStatus.UNRELIABLE

    @property
    def trusted(self) -> bool:
        return self.status in (TrustStatus.RELIABLE, TrustStatus.BASELINE)

    @property
    def label(self) -> str:
        return _LABELS[self.status]

    @property
    def ratio(self) -> float | None:
        if self.r1 is None or not self.baseline_r1:
            return None
        return self.r1 / self.baseline_r1

    def as_dict(self) -> dict[str, Any]:
        return {
            **attributes(self, "language", "status", "flagged", "label"),
            "t2i_r1": self.r1,
            "baseline_t2i_r1": self.baseline_r1,
            **attributes(self, "ratio", "threshold", "check_id", "note", "reasons"),
            "probes": [probe.as_dict() for probe in self.probes],
        }


def _ratio_text(ratio: float | None) -> str:
    return "at 0 even in" if ratio is None else f"{ratio:.2f}×"


BASELINE_LANGUAGE_NAME = "English"


@dataclass(frozen=True)
class ProbeRatio:
    """One probe of a language against English on the same check: zero-shot top-1 accuracy on the
    same classes, or foil accuracy on the same pairs. ``failed`` when ``value < threshold × baseline``
    (and always when English's own value is 0)."""

    probe: str  # "zero-shot accuracy", "foil accuracy"
    value: float
    baseline: float | None
    threshold: float
    check_id: int | None = None

    @property
    def ratio(self) -> float | None:
        return None if not self.baseline else self.value / self.baseline

    @property
    def failed(self) -> bool:
        return self.baseline is not None and (
            self.baseline == 0 or self.value < self.threshold * self.baseline
        )

    @property
    def reason(self) -> str:
        return f"{self.probe} {_ratio_text(self.ratio)} {BASELINE_LANGUAGE_NAME}"

    def as_dict(self) -> dict[str, Any]:
        return attributes(self, "probe", "value", "baseline", "ratio", "threshold", "failed", "check_id")


def with_probes(verdict: LanguageTrust, probes: Iterable[ProbeRatio]) -> LanguageTrust:
    """The verdict with the language's other probes: flagged when retrieval flags it or any probe
    fails (the note then gives every reason); otherwise retrieval's status stands (a language with no
    retrieval check stays "not checked"), its note saying what the probes found."""
    probes = tuple(probes)
    if not probes:
        return verdict
    failed = [p for p in probes if p.failed]
    code = verdict.language
    if failed or verdict.flagged:
        flagged = replace(verdict, status=TrustStatus.UNRELIABLE, probes=probes)
        thresholds = ", ".join(f"{p.probe} below {p.threshold:g}×" for p in failed)
        return replace(
            flagged,
            note=f"{code}: {FLAG_TEXT}: {'; '.join(flagged.reasons)}"
            + (f" (thresholds: {thresholds})." if thresholds else "."),
        )
    found = "; ".join(
        f"{p.probe} {100 * p.value:.1f}%" + (f", {p.ratio:.2f}× {BASELINE_LANGUAGE_NAME}" if p.ratio else "")
        for p in probes
    )
    return replace(verdict, probes=probes, note=f"{verdict.note} Other probes: {found}.")


def not_checked(language: str, model: str = "") -> LanguageTrust:
    where = f" for {model}" if model else ""
    return LanguageTrust(
        language=language,
        status=TrustStatus.NOT_CHECKED,
        note=f"{language}: no retrieval check{where}, so its CLIP-based scores are unchecked (not trusted).",
    )


def _percent(value: float) -> str:
    return f"{100 * value:.1f}%"


def language_trust(
    results: Mapping[str, Mapping[str, Any]],
    *,
    threshold: float,
    check_id: int | None = None,
    baseline: str = BASELINE_LANGUAGE,
) -> dict[str, LanguageTrust]:
    """The verdict of each language of one check: ``results`` maps a language code to its recalls
    (:meth:`.retrieval.RetrievalResult.as_dict`; only ``t2i_r1`` is read).

    Flagged: ``t2i_r1 < threshold × baseline's t2i_r1``. When the baseline's own R@1 is 0 the model
    retrieves nothing even in English, and every language is flagged, the baseline included.
    Raises ``ValueError`` for a threshold outside (0, 1].
    """
    if not 0 < threshold <= 1:
        raise ValueError(f"the unreliable-R@1 ratio must be in (0, 1], got {threshold}")
    base = results.get(baseline)
    base_r1 = None if base is None else float(base[FLAG_MEASURE])
    out: dict[str, LanguageTrust] = {}
    for code, recalls in results.items():
        r1 = float(recalls[FLAG_MEASURE])
        common = {
            "language": code,
            "r1": r1,
            "baseline_r1": base_r1,
            "threshold": threshold,
            "check_id": check_id,
        }
        if base_r1 is None:
            out[code] = LanguageTrust(
                **common,
                status=TrustStatus.NOT_COMPARED,
                note=f"{code}: text→image R@1 {_percent(r1)}, but the check has no {baseline} captions to "
                "compare with, so its CLIP-based scores are not judged (not trusted).",
            )
        elif base_r1 == 0:
            out[code] = LanguageTrust(
                **common,
                status=TrustStatus.UNRELIABLE,
                note=f"{code}: {FLAG_TEXT}: the model's text→image R@1 is 0 even in {baseline}.",
            )
        elif code == baseline:
            out[code] = LanguageTrust(
                **common,
                status=TrustStatus.BASELINE,
                note=f"{code}: the baseline, text→image R@1 {_percent(r1)}.",
            )
        elif r1 < threshold * base_r1:
            out[code] = LanguageTrust(
                **common,
                status=TrustStatus.UNRELIABLE,
                note=f"{code}: {FLAG_TEXT}: text→image R@1 {_percent(r1)} is below {threshold:g} × "
                f"{baseline}'s {_percent(base_r1)} (ratio {r1 / base_r1:.2f}).",
            )
        else:
            out[code] = LanguageTrust(
                **common,
                status=TrustStatus.RELIABLE,
                note=f"{code}: text→image R@1 {_percent(r1)}, {r1 / base_r1:.2f} × {baseline}'s {_percent(base_r1)}.",
            )
    return out


def clip_model_key(*, model: str, pretrained: str = "", checkpoint: str = "", model_id: str = "") -> str:
    """What identifies a CLIP model's weights across runs and checks: the open_clip name, the pretrained
    tag and the checkpoint's hash (from ``model_id``, ``LoadedClip.model_id``). A checkpoint not yet
    hashed by a worker gives ``ckpt:pending``, which matches nothing hashed."""
    found = _CHECKPOINT_HASH.search(model_id or "")
    ckpt = f"sha256-{found.group(1)}" if found else "pending" if checkpoint else "none"
    return f"clip:{model}|weights:{pretrained or 'none'}|ckpt:{ckpt}"


def flagged_languages(trusts: Iterable[LanguageTrust]) -> list[str]:
    return sorted(t.language for t in trusts if t.flagged)
