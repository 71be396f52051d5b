"""The before/after table of a CLIP fine-tuning run: per language, on the test split it never trained on,
how well the base model's and the fine-tuned model's CLIPScore agree with the human ratings.

Per model: Kendall τ_b, τ_c (seed 001's, m = 4) and Spearman ρ, and acc23 with tie calibration
(:func:`evaluation.research.per_caption.per_caption_agreement`). Intervals: 95% percentile bootstrap
over the test captions, both models on the same resamples, for τ_b and ρ of each model and for the
difference Δτ_b = τ_b(fine-tuned) − τ_b(base); an interval of Δτ_b above 0 says the gain is not
resampling noise.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from core.scales import RATING
from evaluation.research.bootstrap import batch_kendall, batch_spearman, percentile_interval, seeded_rng
from evaluation.research.correlation import CORRELATION_N_BOOT
from evaluation.research.per_caption import per_caption_agreement

MODELS = ("base", "fine_tuned")
MIN_CAPTIONS = 3  # the fewest rated captions a coefficient is computed on (per_caption_agreement)
HEADERS = ("language", "n", "model", "τ_b", "τ_b 95% CI", "τ_c", "ρ", "ρ 95% CI", "acc23")
# Rating numbers back to the scale's labels, which per_caption_agreement reads.
_LABELS = {point.value: point.paper_label for point in RATING if point.value is not None}


def _interval(values: np.ndarray) -> list[float] | None:
    found = percentile_interval(values)
    return None if found is None else [found[0], found[1]]


def before_after(
    test_rows: Iterable[Sequence[Any]], *, n_boot: int = CORRELATION_N_BOOT, seed: int = 0
) -> dict[str, dict[str, Any]]:
    """{language: {"n", "base": {...}, "fine_tuned": {...}, "delta_tau_b", "delta_tau_b_ci"}} from
    ``[language, key, base score, fine-tuned score, rating 1-4]`` rows (``ClipFineTune.results["test"]``).
    Each model's entry is per_caption_agreement's dict plus ``kendall_tau_b_ci`` and ``spearman_ci``."""
    by_language: dict[str, list[tuple[str, float, float, int]]] = defaultdict(list)
    for language, key, base, tuned, rating in test_rows:
        by_language[language].append((str(key), float(base), float(tuned), int(rating)))
    out: dict[str, dict[str, Any]] = {}
    for language in sorted(by_language):
        rows = by_language[language]
        ratings = {key: _LABELS[rating] for key, _, _, rating in rows}
        entry: dict[str, Any] = {"n": len(rows)}
        y = np.array([row[3] for row in rows], dtype=float)
        scores = {name: np.array([row[i] for row in rows]) for i, name in enumerate(MODELS, start=1)}
        for index, name in enumerate(MODELS, start=1):
            entry[name] = per_caption_agreement({row[0]: row[index] for row in rows}, ratings)
            entry[name]["why"] = _why_missing(len(rows), scores[name], y)
            entry[name]["interval_why"] = entry[name]["why"] or (
                "no bootstrap (0 resamples)" if n_boot <= 0 else ""
            )
        entry["delta_tau_b"] = None
        entry["delta_tau_b_ci"] = None
        entry["delta_why"] = entry["base"]["why"] or entry["fine_tuned"]["why"]
        if len(rows) >= 3 and n_boot > 0:
            picks = seeded_rng(seed, f"finetune:{language}").integers(0, len(rows), size=(n_boot, len(rows)))
            taus = {}
            for name in MODELS:
                x = scores[name][picks]
                tau_b, _ = batch_kendall(x, y[picks])
                taus[name] = tau_b
                entry[name]["kendall_tau_b_ci"] = _interval(tau_b)
                entry[name]["spearman_ci"] = _interval(batch_spearman(x, y[picks]))
            base, tuned = entry["base"]["kendall_tau_b"], entry["fine_tuned"]["kendall_tau_b"]
            if base is not None and tuned is not None:
                entry["delta_tau_b"] = tuned - base
                entry["delta_tau_b_ci"] = _interval(taus["fine_tuned"] - taus["base"])
                same = np.array_equal(
                    np.argsort(scores["base"], kind="stable"), np.argsort(scores["fine_tuned"], kind="stable")
                )
                if same or np.allclose(taus["fine_tuned"], taus["base"], equal_nan=True):
                    entry["delta_why"] = (
                        f"both models order the {len(rows)} captions the same way"
                        + ("" if same else " in every resample")
                        + ": fine-tuning changed no ranking"
                    )
        elif len(rows) >= MIN_CAPTIONS:
            entry["delta_why"] = "no bootstrap (0 resamples)"
        out[language] = entry
    return out


def _why_missing(n: int, scores: np.ndarray, ratings: np.ndarray) -> str:
    """Why one model's coefficients of a language are empty ("" when they are not)."""
    if n < MIN_CAPTIONS:
        return f"n = {n} < {MIN_CAPTIONS}"
    if np.ptp(ratings) == 0:
        return f"all {n} ratings equal"
    if np.ptp(scores) == 0:
        return f"all {n} scores equal"
    return ""


def _number(value: float | None, why: str = "") -> str:
    if value is None:
        return f"– ({why})" if why else "–"
    return f"{value:.3f}"


def _ci(value: Sequence[float] | None, why: str = "") -> str:
    if value:
        return f"[{value[0]:.3f}, {value[1]:.3f}]"
    return f"– ({why})" if why else "– (undefined in most resamples)"


def delta_text(entry: dict[str, Any]) -> str:
    """``+0.052 [+0.010, +0.094]``, or why there is no difference to show (``n = 2 < 3``, ``both models
    order the 12 captions the same way ...``)."""
    delta, ci, why = entry["delta_tau_b"], entry["delta_tau_b_ci"], entry.get("delta_why", "")
    if delta is None:
        return f"n/a ({why})" if why else "n/a"
    text = f"{delta:+.3f}" + (f" [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "")
    return f"{text} ({why})" if why else text


def before_after_rows(table: dict[str, dict[str, Any]]) -> list[list[str]]:
    """The table as text cells, two rows (base, fine-tuned) per language, in :data:`HEADERS` order."""
    rows = []
    for language, entry in table.items():
        for name, label in (("base", "base"), ("fine_tuned", "fine-tuned")):
            m = entry[name]
            why = m.get("why", "")
            interval_why = why or (
                "" if m.get("kendall_tau_b_ci") or m.get("spearman_ci") else "no bootstrap"
            )
            rows.append(
                [
                    language,
                    str(m["n"]),
                    label,
                    _number(m["kendall_tau_b"], why),
                    _ci(m.get("kendall_tau_b_ci"), interval_why),
                    _number(m["kendall_tau_c"], why),
                    _number(m["spearman"], why),
                    _ci(m.get("spearman_ci"), interval_why),
                    _number(m["acc23"], why),
                ]
            )
    return rows


def before_after_text(table: dict[str, dict[str, Any]], *, demo: bool = False) -> str:
    """A plain-text table for the command line and the report, with Δτ_b per language."""
    lines = []
    if demo:
        lines.append("DEMO: a tiny random model on demo data. These numbers are not results.")
    widths = [8, 5, 10, 7, 18, 7, 7, 18, 7]
    lines.append("  ".join(h.ljust(w) for h, w in zip(HEADERS, widths)))
    for row in before_after_rows(table):
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths)))
    for language, entry in table.items():
        lines.append(f"{language}: Δτ_b (fine-tuned − base) = {delta_text(entry)}")
    return "\n".join(lines)


_CONFIG_LABELS = {
    "learning_rate": "learning rate",
    "batch_size": "batch size",
    "epochs": "epochs (at most)",
    "patience": "early stopping after (epochs without a better dev score)",
    "seed": "training seed",
    "split_seed": "split seed",
    "trainable": "trained parameters",
}


def _config_value(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3g}"
    if isinstance(value, list | tuple):
        return ", ".join(_config_value(v) for v in value) or "none"
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_config_value(v)}" for k, v in value.items()) or "none"
    return "–" if value is None or value == "" else str(value)


def config_items(config: dict[str, Any] | None) -> list[tuple[str, str]]:
    """A fine-tuning run's configuration as (label, value) pairs a reader understands, in a fixed
    order (the known settings first), instead of raw JSON."""
    config = dict(config or {})
    known = [key for key in _CONFIG_LABELS if key in config]
    rest = sorted(key for key in config if key not in _CONFIG_LABELS)
    return [
        (_CONFIG_LABELS.get(key, key.replace("_", " ")), _config_value(config[key])) for key in known + rest
    ]


def score_text(value: float | None) -> str:
    """A dev score (or loss) rounded for reading: ``0.217``; ``–`` when there is none."""
    return "–" if value is None else f"{value:.3f}"
