"""``manage.py add_languages de ar ja`` or ``--xm3600``: languages by code, with CLDR's names, script
direction and the default tokenisation scheme; those already there are left as they are."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from annotation.services.languages import XM3600_LANGUAGES, languages_add
from core.errors import DomainError


class Command(BaseCommand):
    help = "Add languages by code (CLDR names, direction, default tokenisation scheme); --xm3600 adds its 36."

    def add_arguments(self, parser):
        parser.add_argument("codes", nargs="*", help="language codes, e.g. de ar ja fil quz")
        parser.add_argument("--xm3600", action="store_true", help="the 36 languages of Crossmodal-3600")
        parser.add_argument("--dry-run", action="store_true", help="say what would be added; store nothing")

    def handle(self, *args, codes, xm3600, dry_run, verbosity, **options):
        try:
            result = languages_add(codes=[*codes, *(XM3600_LANGUAGES if xm3600 else ())], dry_run=dry_run)
        except DomainError as exc:
            raise CommandError(exc.message) from None
        verb = "Would add" if dry_run else "Added"
        self.stdout.write(f"{verb} {len(result.created)} language(s); {len(result.existing)} already there.")
        if verbosity >= 1:
            for language in result.created:
                self.stdout.write(
                    f"  + {language.code}: {language.name}, {language.direction}, {language.tokenizer}"
                )
        if verbosity >= 2:
            for language in result.existing:
                self.stdout.write(f"  = {language.code}: {language.name} (unchanged)")
