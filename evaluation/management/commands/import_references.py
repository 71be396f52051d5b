from pathlib import Path

from annotation.importers.command import ImportCommand
from evaluation.metrics.references import FORMATS, references_import


class Command(ImportCommand):
    help = (
        "Import reference captions into a named reference set, all or nothing, idempotent. FILE is an "
        'XM3600 captions file (JSON lines {"image/key": ..., "<lang>": {"caption": [...]}}: the captions '
        'of --language) or COCO annotations ({"images": [...], "annotations": [{"image_id", "caption"}]}: '
        "image_id is matched to the image key). A malformed file imports nothing and the error names the "
        "line or entry. Image keys that are not stored are reported and nothing is imported, unless "
        "--skip-unknown. Re-importing the same file changes nothing; a changed file updates the set to it."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path, help="XM3600 .jsonl or COCO annotations .json file.")
        parser.add_argument("--name", required=True, help="Name of the reference set (created if new).")
        parser.add_argument("--language", required=True, help="Language code of the references, e.g. de.")
        parser.add_argument(
            "--format", choices=FORMATS, default="auto", help="File format (default: recognised)."
        )
        parser.add_argument(
            "--skip-unknown",
            action="store_true",
            help="Import the other references when some image keys are unknown.",
        )
        parser.add_argument(
            "--accept-language-problems",
            metavar="REASON",
            default="",
            help="Import even when captions fail the annotators' script or language check (counted per "
            "problem); the reason is recorded.",
        )
        self.add_dry_run_argument(parser)

    def handle(self, *args, **options):
        self.run_import(
            options,
            references_import,
            path=options["file"],
            name=options["name"],
            language_code=options["language"],
            format=options["format"],
            skip_unknown=options["skip_unknown"],
            language_check_reason=options["accept_language_problems"],
        )
