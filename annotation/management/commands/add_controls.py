"""Add rated control items to a caption or verification campaign (annotation.services.controls)."""

from django.core.management.base import BaseCommand

from annotation.services.controls import MAX_CONTROLS_PER_BATCH, campaign_controls_add
from core.commands import service_in_transaction


class Command(BaseCommand):
    help = (
        "Add control items to a caption (screen 1) or verification campaign: captions of another image "
        "(to be rated BAD or MEDIUM) and human reference captions (not to be rated BAD)."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="Campaign id.")
        parser.add_argument("--mismatched", type=int, default=0, help="Caption-of-another-image controls.")
        parser.add_argument("--reference", type=int, default=0, help="Reference-caption controls.")
        parser.add_argument(
            "--reference-system", help="Name of the system holding the human reference captions."
        )
        parser.add_argument(
            "--per-batch",
            type=int,
            default=1,
            help=f"Controls in each new batch (1 to {MAX_CONTROLS_PER_BATCH}).",
        )
        parser.add_argument("--threshold", type=float, help="Pass rate below which an annotator is flagged.")
        parser.add_argument(
            "--min-ratings", type=int, help="Control ratings needed before judging an annotator."
        )
        parser.add_argument("--seed", type=int, help="Seed of the draw (default: random).")
        parser.add_argument("--dry-run", action="store_true", help="Check and report, store nothing.")

    def handle(self, *args, **options):
        items = service_in_transaction(
            lambda: campaign_controls_add(
                campaign_id=options["campaign"],
                mismatched=options["mismatched"],
                reference=options["reference"],
                reference_system=options["reference_system"],
                controls_per_batch=options["per_batch"],
                control_pass_threshold=options["threshold"],
                control_min_judgments=options["min_ratings"],
                seed=options["seed"],
            ),
            dry_run=options["dry_run"],
        )
        if options["dry_run"]:
            self.stdout.write(f"Dry run: would add {len(items)} control items; nothing stored.")
            return
        if options["verbosity"] >= 1:
            self.stdout.write(
                f"Added {len(items)} control items to campaign {options['campaign']}; "
                f"{options['per_batch']} go into each new batch."
            )
