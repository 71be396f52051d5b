from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.errors import DomainError
from annotation.importers import system_captions_import


class Command(BaseCommand):
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
        parser.add_argument("--dry-run", action="store_true", help="Check and report; write nothing.")

    def handle(self, *args, **options):
        try:
            report = system_captions_import(
                path=options["file"],
                system_name=options["system"],
                language_code=options["language"],
                skip_unknown=options["skip_unknown"],
                dry_run=options["dry_run"],
            )
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        verbosity = options["verbosity"]
        if verbosity >= 1:
            self.stdout.write(report.summary())
            for line in report.details(full=verbosity >= 2):
                self.stdout.write(f"  {line}")
