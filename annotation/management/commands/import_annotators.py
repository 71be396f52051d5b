from pathlib import Path

from annotation.importers import annotators_import
from annotation.importers.command import ImportCommand
from annotation.services.annotators import password_set_path


class Command(ImportCommand):
    help = (
        "Create annotators from a CSV file (columns username, email, languages as code:level pairs, "
        "reads_english), all or nothing, idempotent. Accounts are never staff and have no password: "
        "each new annotator gets a one-time set-password link (printed as a path)."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path, help="CSV file with a header line.")
        self.add_dry_run_argument(parser)

    def handle(self, *args, **options):
        from django.contrib.auth import get_user_model

        report = self.run_import(options, annotators_import, path=options["file"])
        if not report.dry_run:
            for user in get_user_model().objects.filter(username__in=report.created_keys):
                self.stdout.write(f"{user.get_username()}: {password_set_path(user)}")
