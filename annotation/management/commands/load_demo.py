from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from annotation.services.demo import demo_load
from core.errors import DomainError


class _DryRun(Exception):
    pass


class Command(BaseCommand):
    help = (
        "Load the demo (real photographs from scikit-image, two captioning systems, German, Arabic "
        "and Japanese, demo accounts, one open caption campaign per language, an open side-by-side "
        "campaign in German) and print the logins. Idempotent."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--dry-run", action="store_true", help="Show what would be loaded; store nothing."
        )
        parser.add_argument(
            "--url",
            default="http://127.0.0.1:8000/",
            help="Where the demo will be served (for the printout).",
        )
        parser.add_argument(
            "--force",
            action="store_true",
            help="Load even with DEBUG off: the demo accounts have a published password.",
        )

    def handle(self, *args, **options):
        if not settings.DEBUG and not options["force"]:
            raise CommandError(
                "DEBUG is off: this looks like a real deployment, and the demo accounts have a published "
                "password. Use --force if you really want them here."
            )
        try:
            with transaction.atomic():
                summary = demo_load()
                if options["dry_run"]:
                    raise _DryRun
        except _DryRun:
            pass
        except DomainError as exc:
            raise CommandError(exc.message) from exc

        if options["verbosity"] < 1:
            return
        out = self.stdout.write
        if options["dry_run"]:
            out("Dry run: nothing was stored.")
        out(
            f"Images: {summary.images} ({summary.images_created} new); system captions (English, German): "
            f"{summary.captions} ({summary.captions_created} new); accounts: {len(summary.accounts)} "
            f"({summary.users_created} new)."
        )
        for name, code, state in summary.campaigns:
            out(f"Campaign “{name}” [{code}]: {state}.")
        out("")
        url = options["url"].rstrip("/") + "/"
        out(f"Open {url}  (admin: {url}admin/)")
        out("")
        width = max(len(a.username) for a in summary.accounts)
        out(f"{'login':<{width}}  {'password':<16}  role")
        for account in summary.accounts:
            role = account.role
            if account.languages:
                role += " · " + ", ".join(f"{code} ({level})" for code, level in account.languages)
            out(f"{account.username:<{width}}  {summary.password:<16}  {role}")
        for note in summary.notes:
            out("")
            out(note)
        if not summary.users_created:
            out("(Accounts already existed: a password changed since the first run was left as it is.)")
