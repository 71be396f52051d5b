"""Human-evaluation results as the admin shows them: plain rows of already formatted text.

The numbers come from :mod:`evaluation.human.selectors` (which calls the pure functions of
:mod:`evaluation.human`); here they only become labelled strings, so the templates stay
simple and auto-escape everything (names, captions, user names).
"""

from __future__ import annotations

from dataclasses import asdict, fields

from evaluation.human import QUALITY_COLUMNS, STATISTICS_COLUMNS
from evaluation.human.quality import QualityRow
from evaluation.human.selectors import LanguageTables, RatedControls, RatingResults, SxsResults
from evaluation.human.statistics import CaptionStatsRow
from evaluation.human.sxs import SxsSummary
from evaluation.research.tables import SXS_PAGE_COLUMNS, html_table

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


def _control_verdict(row, minimum: int) -> str:
    """What the pass rate means, next to it: "3 of 4 passed — too few to judge (minimum 5)"."""
    passed = f"{row.n_passed} of {row.n_controls} passed"
    if row.too_few:
        return f"{passed} — too few to judge (minimum {minimum})"
    if row.flagged:
        return f"{passed} — flagged"
    return passed


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
        "minimum": results.control_minimum,
        "n_control_judgments": results.n_control_judgments,
        "controls": _control_rows(results.controls, results.control_minimum),
        "flagged": [row.username for row in results.flagged],
    }


def _control_rows(controls, minimum: int) -> list[dict]:
    """One row per annotator of a controls table (side-by-side or rated), as the panels show it."""
    return [
        {
            "username": row.username,
            "pseudonym": row.pseudonym,
            "n_controls": row.n_controls,
            "n_passed": row.n_passed,
            "pass_rate": f"{row.pass_rate:.0%}",
            "flagged": row.flagged,
            "verdict": _control_verdict(row, minimum),
        }
        for row in controls
    ]


def rated_controls_panel(results: RatedControls) -> dict:
    """Control items of a caption (screen 1) or verification campaign: pass rate per annotator."""
    campaign = results.campaign
    return {
        "campaign_id": campaign.pk,
        "n_control_items": campaign.items.filter(is_control=True).count(),
        "per_batch": campaign.controls_per_batch,
        "threshold": f"{results.threshold:.0%}",
        "minimum": results.minimum,
        "n_control_ratings": results.n_control_ratings,
        "controls": _control_rows(results.controls, results.minimum),
        "flagged": [row.username for row in results.flagged],
    }


def rating_panel(results: RatingResults) -> dict:
    return {
        "language": results.campaign.language.code,
        "n_ratings": results.n_ratings,
        "n_captions": results.quality.n_captions if results.quality else 0,
        "quality": html_table([results.quality] if results.quality else [], QUALITY_COLUMNS),
        "alpha": _num(results.alpha, ".3f"),
    }


# The language statistics page: Table 1 and Table 2 with each language's name beside its code.
LANGUAGE_COLUMNS = (("language", "Id", ""), ("name", "language", ""))
TABLE1_PAGE_COLUMNS = (*LANGUAGE_COLUMNS, *STATISTICS_COLUMNS[1:], ("tokenizer", "tokeniser", ""))
TABLE2_PAGE_COLUMNS = (*LANGUAGE_COLUMNS, *QUALITY_COLUMNS[1:])
SXS_CAMPAIGN_COLUMNS = (("campaign", "campaign", ""), *SXS_PAGE_COLUMNS, ("alpha_ordinal", "alpha", ".3f"))


def _language_record(table: LanguageTables, row, fields) -> dict:
    values = asdict(row) if row is not None else dict.fromkeys(fields)
    return {**values, "language": table.code, "name": table.name}


def language_statistics_tables(tables: list[LanguageTables], sxs_rows: list[dict]) -> dict:
    """The three tables of the language statistics page, for ``partials/table.html``."""
    stats_fields = [field.name for field in fields(CaptionStatsRow)]
    quality_fields = [field.name for field in fields(QualityRow)]
    by_language = [("language", "language")]
    return {
        "table1": html_table(
            [_language_record(t, t.statistics, stats_fields) for t in tables],
            TABLE1_PAGE_COLUMNS,
            attributes=by_language,
        ),
        "table2": html_table(
            [_language_record(t, t.quality, quality_fields) for t in tables],
            TABLE2_PAGE_COLUMNS,
            attributes=by_language,
        ),
        "sxs": html_table(sxs_rows, SXS_CAMPAIGN_COLUMNS),
    }


def campaign_panels_register() -> None:
    """Add the Results panels to annotation's campaign page (see ``annotation.admin.panels``)."""
    from annotation.admin.panels import campaign_panel_register
    from annotation.models import CampaignKind
    from evaluation.human.selectors import rated_controls, rating_results, sxs_results

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
    campaign_panel_register(
        name="rated-controls",
        kinds=[CampaignKind.CAPTION, CampaignKind.RATING],
        template="admin/evaluation/campaign/rated_controls.html",
        build=lambda campaign: rated_controls_panel(rated_controls(campaign)),
    )
