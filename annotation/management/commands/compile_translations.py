from django.core.management.base import BaseCommand, CommandError

from annotation.catalogues import catalogues, compiled, stale


class Command(BaseCommand):
    help = (
        "Compile the interface's .po catalogues (locale/) to .mo with Babel: no GNU gettext needed. "
        "With --check, change nothing and fail if a committed .mo differs from its .po."
    )

    def add_arguments(self, parser):
        parser.add_argument("--check", action="store_true", help="Only report stale .mo files (exit 1).")

    def handle(self, *args, **options):
        found = catalogues()
        if not found:
            raise CommandError("No catalogue found under settings.LOCALE_PATHS.")
        if options["check"]:
            bad = [c for c in found if stale(c)]
            for c in bad:
                self.stderr.write(f"{c.mo} does not match {c.po.name}: run scripts/messages.sh")
            if bad:
                raise CommandError(f"{len(bad)} compiled catalogue(s) out of date.")
            if options["verbosity"] >= 1:
                self.stdout.write(f"{len(found)} compiled catalogues match their .po files.")
            return
        for catalogue in found:
            catalogue.mo.write_bytes(compiled(catalogue))
            if options["verbosity"] >= 1:
                self.stdout.write(f"Compiled {catalogue.po}")
