from django.core.management.base import BaseCommand, CommandError

from challenges.fresh import DEFAULT_RATING, RATINGS, fresh_references_attach
from challenges.models import Benchmark
from core.errors import DomainError


class Command(BaseCommand):
    help = (
        "Make a caption campaign's captions the fresh references of a benchmark's language: every entry "
        "scored from then on is also scored on them, the leaderboard shows both rankings and each entry's "
        "rank change, and the campaign's captions are sealed (no export, no research API). Only captions "
        "whose median verification rating is at least --min-rating are kept."
    )

    def add_arguments(self, parser):
        parser.add_argument("benchmark", help="The benchmark's slug (its address: /challenges/<slug>/).")
        parser.add_argument("--language", required=True, help="Language code, e.g. de.")
        parser.add_argument("--campaign", type=int, required=True, help="Id of the caption campaign.")
        parser.add_argument(
            "--min-rating",
            choices=[r or "any" for r in RATINGS],
            default=DEFAULT_RATING,
            help="Keep captions whose median verification rating is at least this (any: every counted "
            f"caption). Default {DEFAULT_RATING}.",
        )

    def handle(self, *args, **options):
        benchmark = Benchmark.objects.filter(slug=options["benchmark"]).first()
        if benchmark is None:
            raise CommandError(f"No benchmark has the slug “{options['benchmark']}”.")
        rating = "" if options["min_rating"] == "any" else options["min_rating"]
        try:
            done = fresh_references_attach(
                benchmark_id=benchmark.pk,
                language_code=options["language"],
                campaign_id=options["campaign"],
                min_verified_rating=rating,
            )
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        if options["verbosity"] >= 1:
            self.stdout.write(done.summary())
