"""Print the human-evaluation tables: Table 1 (caption statistics), Table 2 (caption quality) and the
side-by-side summaries, as aligned text, CSV or JSON."""

import json

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Campaign, CampaignKind, Language
from evaluation.human import QUALITY_COLUMNS, STATISTICS_COLUMNS
from evaluation.human.selectors import caption_statistics_rows, quality_rows, sxs_table_rows
from evaluation.human.sxs import DEFAULT_N_BOOT
from evaluation.research.tables import SXS_TABLE_COLUMNS, format_table

SXS_CAMPAIGN_COLUMNS = (
    ("campaign", "campaign", ""),
    *SXS_TABLE_COLUMNS,
    ("flagged_annotators", "flagged", "d"),
)
TABLES = {
    "statistics": ("Table 1: caption statistics", STATISTICS_COLUMNS),
    "quality": ("Table 2: caption quality", QUALITY_COLUMNS),
    "sxs": ("Side by side", SXS_CAMPAIGN_COLUMNS),
}


class Command(BaseCommand):
    help = (
        "Print Table 1 (captions per language: images with 1, 2, 3+ captions, mean words and characters), "
        "Table 2 (quality per language from verification campaigns: %GOOD+, %MED+, %BAD, %NEI) and the "
        "side-by-side summaries (WINS, LOSSES, ΔS×S with its bootstrap interval, sign test, position bias, "
        "Krippendorff's alpha, controls). Only submitted work counts; control items never enter ΔS×S."
    )

    def add_arguments(self, parser):
        parser.add_argument("--language", help="Only this language code, e.g. de.")
        parser.add_argument(
            "--campaign",
            type=int,
            help="Only this campaign: a caption campaign gives its Table 1 row, a verification campaign its "
            "Table 2 row, a side-by-side campaign its summary.",
        )
        parser.add_argument("--format", choices=["text", "csv", "json"], default="text")
        parser.add_argument(
            "--table",
            choices=["all", *TABLES],
            default="all",
            help="Print one table only (one CSV table per run is what a spreadsheet reads).",
        )
        parser.add_argument(
            "--n-boot",
            type=int,
            default=DEFAULT_N_BOOT,
            help=f"Bootstrap resamples for the ΔS×S interval (default {DEFAULT_N_BOOT:,}; seed 0).",
        )

    def handle(self, *args, **options):
        language, campaign_id = options["language"], options["campaign"]
        if language and not Language.objects.filter(code=language).exists():
            raise CommandError(f"There is no language “{language}”.")
        if options["n_boot"] < 1:
            raise CommandError("--n-boot must be at least 1.")
        wanted = list(TABLES) if options["table"] == "all" else [options["table"]]
        if campaign_id is not None:
            kind = Campaign.objects.filter(pk=campaign_id).values_list("kind", flat=True).first()
            if kind is None:
                raise CommandError(f"There is no campaign #{campaign_id}.")
            table_of_kind = {
                CampaignKind.CAPTION: "statistics",
                CampaignKind.RATING: "quality",
                CampaignKind.SIDE_BY_SIDE: "sxs",
            }[kind]
            wanted = [t for t in wanted if t == table_of_kind]

        rows = {}
        for table in wanted:
            if table == "statistics":
                rows[table] = caption_statistics_rows(language_code=language, campaign_id=campaign_id)
            elif table == "quality":
                rows[table] = quality_rows(language_code=language, campaign_id=campaign_id)
            else:
                rows[table] = sxs_table_rows(
                    language_code=language, campaign_id=campaign_id, n_boot=options["n_boot"]
                )

        fmt = options["format"]
        if fmt == "json":
            data = {
                table: json.loads(format_table(rows[table], TABLES[table][1], "json")) for table in wanted
            }
            self.stdout.write(json.dumps(data, ensure_ascii=False, indent=2))
            return
        parts = []
        for table in wanted:
            title, columns = TABLES[table]
            body = format_table(rows[table], columns, fmt)
            if fmt == "text":
                parts.append(f"{title}\n\n{body}" if rows[table] else f"{title}\n\n(nothing yet)\n")
            elif len(wanted) > 1:
                parts.append(f"# {title}\r\n{body}")
            else:
                parts.append(body)
        self.stdout.write(("\n" if fmt == "text" else "\r\n").join(parts), ending="")
