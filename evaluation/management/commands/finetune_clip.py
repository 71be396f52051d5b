"""manage.py finetune_clip: fine-tune a CLIP model on the platform's captions and ratings (seed 001, sec. 3).

    manage.py finetune_clip --campaigns "Captions de" "Verification de" --register-as clip-de-ft
    manage.py finetune_clip --campaigns 3 --captions-file sw=xm3600_sw.jsonl --ratings-file ratings.csv \
        --base my-clip --lr 1e-5 --batch-size 32 --epochs 5 --seed 0 --split-seed 0 --trainable text
    manage.py finetune_clip --demo --register-as demo-ft    # the demo's tiny model on the demo's data
    manage.py finetune_clip --resume 4      # continue a killed or failed run from its last checkpoint
    manage.py finetune_clip --show 4        # the before/after table of a finished run

Training runs in this process with a progress bar (epoch, step, losses, dev score) on stderr;
``--queue`` hands it to a Celery worker (a GPU worker when there is one) and returns at once.
``--dry-run`` plans and prints the data selection and stores nothing.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from core.errors import DomainError
from evaluation.finetune.plan import (
    clip_model_demo_register,
    demo_data_files,
    fine_tune_plan,
    fine_tune_resume,
    fine_tune_store,
    fine_tune_train,
)
from evaluation.metrics.clip.finetune import TRAINABLE_CHOICES
from evaluation.models import ClipFineTune, RunStatus
from evaluation.research.finetune_tables import before_after, before_after_text


def _captions_files(values: list[str]) -> dict[str, str]:
    out = {}
    for value in values or []:
        code, sep, path = value.partition("=")
        if not sep or not code.strip() or not path.strip():
            raise CommandError(
                f"--captions-file takes LANGUAGE=PATH (e.g. sw=xm3600_sw.jsonl), not {value!r}"
            )
        out[code.strip()] = path.strip()
    return out


class Command(BaseCommand):
    help = "Fine-tune CLIP on the platform's human captions (contrastive) and ratings (Pearson); register the result."

    def add_arguments(self, parser):
        parser.add_argument(
            "--campaigns",
            nargs="+",
            default=[],
            metavar="CAMPAIGN",
            help="caption and rating campaigns (ids or names)",
        )
        parser.add_argument(
            "--languages", nargs="+", default=[], metavar="CODE", help="keep only these languages"
        )
        parser.add_argument(
            "--captions-file",
            action="append",
            default=[],
            metavar="LANG=PATH",
            help="XM3600 JSON-lines captions of one language",
        )
        parser.add_argument("--ratings-file", metavar="PATH", help="CSV image,caption,language,rating")
        parser.add_argument(
            "--base", help="registered CLIP model to start from (default: the CLIP_* settings)"
        )
        parser.add_argument(
            "--demo-base", action="store_true", help="start from the demo's tiny random model (registers it)"
        )
        parser.add_argument(
            "--demo",
            action="store_true",
            help="the demo's tiny model on the demo's data (references and SIMULATED ratings of evaluation/demo)",
        )
        parser.add_argument("--name", default="")
        parser.add_argument(
            "--register-as", default="", help="name the fine-tuned model gets for metric runs"
        )
        parser.add_argument("--lr", type=float, default=1e-5, help="learning rate (AdamW)")
        parser.add_argument("--batch-size", type=int, default=32)
        parser.add_argument("--epochs", type=int, default=5)
        parser.add_argument(
            "--patience", type=int, default=2, help="epochs without a better dev score before stopping"
        )
        parser.add_argument("--seed", type=int, default=0, help="training seed (batch order, initial RNG)")
        parser.add_argument(
            "--split-seed", type=int, default=0, help="seed of the train/dev/test image split"
        )
        parser.add_argument("--trainable", choices=TRAINABLE_CHOICES, default="all")
        parser.add_argument(
            "--autocast", choices=["", "bf16"], default="", help="bf16 on CUDA; ignored on CPU"
        )
        parser.add_argument(
            "--min-ratings",
            type=int,
            help="rated captions a language needs (default CLIP_FINETUNE_MIN_RATINGS)",
        )
        parser.add_argument("--queue", action="store_true", help="hand the run to a Celery worker")
        parser.add_argument(
            "--dry-run", action="store_true", help="plan and print the selection; store nothing"
        )
        parser.add_argument(
            "--resume", type=int, metavar="RUN", help="continue a run from its last checkpoint"
        )
        parser.add_argument("--show", type=int, metavar="RUN", help="print a run's before/after table")

    def handle(self, *args, **options):
        self.verbosity = options["verbosity"]
        try:
            if options["show"]:
                return self._show(options["show"])
            if options["resume"]:
                run = fine_tune_resume(run_id=options["resume"], enqueue=options["queue"])
            else:
                base = options["base"]
                captions_files = _captions_files(options["captions_file"])
                ratings_file = options["ratings_file"]
                if options["demo"]:
                    demo_captions, demo_ratings = demo_data_files()
                    captions_files = demo_captions | captions_files
                    ratings_file = ratings_file or demo_ratings
                    options["demo_base"] = not base
                if options["demo_base"]:
                    if base:
                        raise CommandError("--base and --demo-base exclude each other")
                    base = clip_model_demo_register().name if not options["dry_run"] else "demo-tiny-clip"
                plan = fine_tune_plan(
                    campaigns=options["campaigns"],
                    languages=options["languages"],
                    captions_files=captions_files,
                    ratings_file=ratings_file,
                    base=base if not (options["dry_run"] and options["demo_base"]) else None,
                    name=options["name"],
                    register_as=options["register_as"],
                    learning_rate=options["lr"],
                    batch_size=options["batch_size"],
                    epochs=options["epochs"],
                    seed=options["seed"],
                    split_seed=options["split_seed"],
                    trainable=options["trainable"],
                    patience=options["patience"],
                    autocast=options["autocast"],
                    min_ratings=options["min_ratings"],
                )
                self.stdout.write(f"Data: {plan.selection}")
                if options["dry_run"]:
                    self.stdout.write("Dry run: nothing stored.")
                    return
                run = fine_tune_store(plan=plan, enqueue=options["queue"])
            if options["queue"]:
                self.stdout.write(f"Fine-tuning run #{run.pk} queued; follow it in the admin.")
                return
            self._train(run)
        except DomainError as exc:
            raise CommandError(exc.message) from None

    def _train(self, run: ClipFineTune) -> None:
        ClipFineTune.objects.filter(pk=run.pk, status__in=[RunStatus.PENDING]).update(status=RunStatus.QUEUED)
        with tqdm(total=None, unit="step", file=self.stderr._out, disable=self.verbosity < 1) as bar:

            def progress(values):
                bar.update(values["step"] - bar.n)
                shown = {"epoch": values["epoch"] + (1 if values["phase"] == "train" else 0)}
                for name, label in (
                    ("loss_contrastive", "L_C"),
                    ("loss_pearson", "L_P"),
                    ("dev_score", "dev τ_b"),
                ):
                    if values.get(name) is not None:
                        shown[label] = f"{values[name]:.3f}"
                bar.set_postfix(shown)

            outcome = fine_tune_train(run_id=run.pk, on_progress=progress)
        run.refresh_from_db()
        if outcome != "succeeded":
            raise CommandError(
                f"Fine-tuning run #{run.pk} {outcome}: {run.error or run.status}. "
                f"Resume it with manage.py finetune_clip --resume {run.pk}."
            )
        self.stdout.write(f"Fine-tuning run #{run.pk} succeeded: registered CLIP model “{run.model.name}”.")
        self._show(run.pk)

    def _show(self, run_id: int) -> None:
        run = ClipFineTune.objects.filter(pk=run_id).first()
        if run is None:
            raise CommandError(f"There is no fine-tuning run #{run_id}.")
        if run.status != RunStatus.SUCCEEDED:
            raise CommandError(
                f"Fine-tuning run #{run_id} is {run.status}{': ' + run.error if run.error else ''}."
            )
        self.stdout.write(f"Test split, per language (model {run.model.name if run.model else '?'}):")
        self.stdout.write(before_after_text(before_after(run.results.get("test", [])), demo=run.is_demo))
