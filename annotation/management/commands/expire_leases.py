from django.core.management.base import BaseCommand

from annotation.assignment.engine import leases_expire


class Command(BaseCommand):
    help = "Expire batches whose lease ran out; their unfinished images go back to the pool (work is kept)."

    def handle(self, *args, **options):
        n = leases_expire()
        if options["verbosity"] >= 1:
            self.stdout.write(f"Expired {n} batch{'es' if n != 1 else ''}.")
