from pathlib import Path

from annotation.importers import system_captions_import
from annotation.importers.command import ImportCommand


class Command(ImportCommand):
    help = (
        "Import a captioning system's captions, all or nothing, idempotent. FILE is either COCO results "
        '([{"image_id": ..., "caption": ...}], needs --language; image_id is matched to the image key) or '
        'JSON lines in the XM3600 style ({"image/key": ..., "<lang>": {"caption": [...]}}: the first caption '
        "of every language, or of --language only). Image keys that are not stored are reported and nothing "
        "is imported, unless --skip-unknown. A changed caption text is updated."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path, help="COCO results .json or JSON lines file.")
        parser.add_argument("--system", required=True, help="Name of the captioning system (created if new).")
        parser.add_argument("--language", help="Language code of the captions (required for COCO results).")
        parser.add_argument(
            "--skip-unknown",
            action="store_true",
            help="Import the other captions when some image keys are unknown.",
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
            system_captions_import,
            path=options["file"],
            system_name=options["system"],
            language_code=options["language"],
            skip_unknown=options["skip_unknown"],
            language_check_reason=options["accept_language_problems"],
        )
