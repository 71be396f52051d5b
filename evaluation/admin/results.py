"""Human-evaluation results as the admin shows them: plain rows of already formatted text.

The numbers come from :mod:`evaluation.human.selectors` (which calls the pure functions of
:mod:`evaluation.human`); here they only become labelled strings, so the templates stay
simple and auto-escape everything (names, captions, user names).
"""

from __future__ import annotations

from evaluation.human.quality import QualityRow
from evaluation.human.selectors import LanguageTables, RatingResults, SxsResults
from evaluation.human.statistics import CaptionStatsRow
from evaluation.human.sxs import SxsSummary

NA = "n/a"


def _num(value, fmt: str, suffix: str = "") -> str:
    return NA if value is None else f"{format(value, fmt)}{suffix}"


def _images(n: int) -> str:
    return f" ({n} image{'' if n == 1 else 's'})"


def sxs_summary_rows(summary: SxsSummary) -> list[tuple[str, str]]:
    """(label, value) rows of one side-by-side summary."""
    per_image = ", ".join(
        f"{images} image{'s' if images != 1 else ''} with {n}"
        for n, images in summary.judgments_per_image.items()
    )
    confidence = f"{round(100 * summary.confidence)}%"
    interval = NA
    if summary.ci_low is not None:
        interval = f"[{summary.ci_low:+.1f}, {summary.ci_high:+.1f}]"
    position = NA
    if summary.left_preferred_share is not None:
        position = (
            f"{summary.left_preferred_share:.1%} of {summary.decided_judgments} non-similar judgments "
            f"(binomial test against 50%: p = {summary.position_bias_p:.3g})"
        )
    return [
        ("images", str(summary.n_images)),
        ("judgments", f"{summary.n_judgments}" + (f" ({per_image} judgments)" if per_image else "")),
        (
            "WINS (a strict majority judged m2 better)",
            _num(summary.wins_pct, ".1f", "%" + _images(summary.wins)),
        ),
        (
            "LOSSES (a strict majority judged m2 worse)",
            _num(summary.losses_pct, ".1f", "%" + _images(summary.losses)),
        ),
        ("ties (no strict majority)", _num(summary.ties_pct, ".1f", "%" + _images(summary.ties))),
        ("ΔS×S = WINS − LOSSES", _num(summary.delta_sxs, "+.1f", " points")),
        (
            f"{confidence} interval of ΔS×S (bootstrap over images, {summary.n_boot:,} resamples, seed {summary.seed})",
            interval,
        ),
        (
            "sign test, WINS vs LOSSES (two-sided, ties left out)",
            NA if summary.sign_test_p is None else f"p = {summary.sign_test_p:.3g}",
        ),
        ("mean score from m2's side (−3 … +3)", _num(summary.mean_score_per_judgment, "+.2f")),
        ("position bias: left caption preferred", position),
        ("Krippendorff's α (ordinal, scores from m2's side)", _num(summary.alpha_ordinal, ".3f")),
    ]


def sxs_panel(results: SxsResults) -> dict:
    campaign = results.campaign
    return {
        "m1": campaign.base_system.name if campaign.base_system_id else NA,
        "m2": campaign.test_system.name if campaign.test_system_id else NA,
        "summary": sxs_summary_rows(results.summary),
        "identical_images": results.identical.n_images,
        "identical": sxs_summary_rows(results.identical)[:6] if results.identical.n_images else [],
        "identical_mean": _num(results.identical.mean_score_per_judgment, "+.2f"),
        "threshold": f"{results.control_threshold:.0%}",
        "n_control_judgments": results.n_control_judgments,
        "controls": [
            {
                "username": row.username,
                "pseudonym": row.pseudonym,
                "n_controls": row.n_controls,
                "n_passed": row.n_passed,
                "pass_rate": f"{row.pass_rate:.0%}",
                "flagged": row.flagged,
            }
            for row in results.controls
        ],
        "flagged": [row.username for row in results.flagged],
    }


def quality_cells(row: QualityRow | None) -> list[str]:
    """%GOOD+, %MED+, %BAD, %NEI, captions with a median, all-NEI captions."""
    if row is None:
        return [NA] * 6
    return [
        _num(row.pct_good_plus, ".1f"),
        _num(row.pct_med_plus, ".1f"),
        _num(row.pct_bad, ".1f"),
        _num(row.nei_rate, ".1f"),
        str(row.n_rated),
        str(row.n_no_median),
    ]


def statistics_cells(row: CaptionStatsRow | None) -> list[str]:
    """captions, images with 1 / 2 / 3+ captions, mean words, mean characters, tokeniser."""
    if row is None:
        return [NA] * 7
    return [
        str(row.n_captions),
        str(row.images_1),
        str(row.images_2),
        str(row.images_3_plus),
        f"{row.mean_words:.1f}",
        f"{row.mean_chars:.1f}",
        row.tokenizer or NA,
    ]


def rating_panel(results: RatingResults) -> dict:
    return {
        "language": results.campaign.language.code,
        "n_ratings": results.n_ratings,
        "n_captions": results.quality.n_captions if results.quality else 0,
        "quality": quality_cells(results.quality),
        "alpha": _num(results.alpha, ".3f"),
    }


def language_rows(tables: list[LanguageTables]) -> list[dict]:
    return [
        {
            "code": t.code,
            "name": t.name,
            "statistics": statistics_cells(t.statistics),
            "quality": quality_cells(t.quality),
        }
        for t in tables
    ]


def campaign_panels_register() -> None:
    """Add the Results panels to annotation's campaign page (see ``annotation.admin.panels``)."""
    from annotation.admin.panels import campaign_panel_register
    from annotation.models import CampaignKind
    from evaluation.human.selectors import rating_results, sxs_results

    campaign_panel_register(
        name="sxs-results",
        kinds=[CampaignKind.SIDE_BY_SIDE],
        template="admin/evaluation/campaign/sxs_results.html",
        build=lambda campaign: sxs_panel(sxs_results(campaign)),
    )
    campaign_panel_register(
        name="rating-results",
        kinds=[CampaignKind.RATING],
        template="admin/evaluation/campaign/rating_results.html",
        build=lambda campaign: rating_panel(rating_results(campaign)),
    )
