import sys
import time

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from core.errors import DomainError
from core.tokenisation import SCHEME_NAMES
from evaluation.metrics.clip import IMAGE_ORIENTATIONS
from evaluation.metrics.signatures import group_signatures
from evaluation.models import ImageSet, MetricRun, ReferenceSet, RunStatus
from evaluation.runs.plan import CIDER_DF_CHOICES, CIDER_DF_TEST, metric_run_create, metric_run_resume
from evaluation.runs.selectors import corpus_table, metric_run_get, metric_run_queryset

POLL_SECONDS = 0.5
# Queued this long without a chunk starting: probably no worker is running.
NO_WORKER_HINT_SECONDS = 30


class Command(BaseCommand):
    help = (
        "Metric runs: start one (and follow its progress), follow, show, resume or list runs.\n"
        "  metric_run start --language de --systems a,b --references NAME [--image-set NAME] "
        "[--metrics BLEU-4 CIDEr-D | text | clip | all] [--scheme NAME] [--cider-df test|refset] [--name NAME] "
        "[--image-orientation exif|stored] [--wait]\n"
        "  metric_run follow ID | show ID | resume ID [--wait] | list [--limit N]"
    )

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True, metavar="{start,follow,show,resume,list}")
        start = sub.add_parser("start", help="Start a metric run.")
        start.add_argument("--language", required=True, help="Language code of the captions, e.g. de.")
        start.add_argument("--systems", required=True, help="Captioning system names, comma-separated.")
        start.add_argument("--references", required=True, help="Name of the reference set.")
        start.add_argument(
            "--image-set", help="Name of the image set (default: every image with references)."
        )
        start.add_argument(
            "--metrics",
            nargs="+",
            default=["text"],
            help="Metric names (BLEU-1..4, ROUGE-L, CIDEr, CIDEr-D, METEOR, CLIPScore, RefCLIPScore) or the "
            "groups text, clip, all; default: text.",
        )
        start.add_argument(
            "--cider-df",
            choices=list(CIDER_DF_CHOICES),
            default=CIDER_DF_TEST,
            help="CIDEr document frequencies: test = the scored images' references (default, the COCO server's "
            "behaviour); refset = every image of the reference set (steadier for a few images).",
        )
        start.add_argument(
            "--scheme",
            choices=SCHEME_NAMES,
            help="Tokenisation scheme of the text metrics for this run (default: the language's setting).",
        )
        start.add_argument("--name", default="", help="A name for the run (default: systems vs references).")
        start.add_argument(
            "--clip-model",
            default=None,
            help="CLIP metrics: a registered CLIP model (e.g. one made by finetune_clip) instead of the CLIP_* settings.",
        )
        start.add_argument(
            "--image-orientation",
            choices=IMAGE_ORIENTATIONS,
            help="CLIP metrics: exif (upright by the EXIF tag, as annotators see it) or stored (as the "
            "reference CLIPScore code reads the file); default: the CLIP_IMAGE_ORIENTATION setting. "
            "Recorded in the run's params.",
        )
        start.add_argument(
            "--wait", action="store_true", help="Follow the run with a progress bar until it ends."
        )
        for name, text in (("follow", "Follow a run with a progress bar."), ("show", "Show a run.")):
            sub.add_parser(name, help=text).add_argument("run_id", type=int)
        resume = sub.add_parser("resume", help="Re-enqueue the chunks of a run that are not done.")
        resume.add_argument("run_id", type=int)
        resume.add_argument("--wait", action="store_true", help="Follow the run until it ends.")
        runs = sub.add_parser("list", help="List the latest runs.")
        runs.add_argument("--limit", type=int, default=20)

    def handle(self, *args, **options):
        self.verbosity = options["verbosity"]
        try:
            return getattr(self, f"handle_{options['action']}")(options)
        except DomainError as exc:
            raise CommandError(exc.message) from exc

    # --- actions ---------------------------------------------------------------------------

    def handle_start(self, options):
        reference_set = ReferenceSet.objects.filter(name=options["references"]).first()
        if reference_set is None:
            names = ", ".join(ReferenceSet.objects.values_list("name", flat=True)[:10]) or "none yet"
            raise CommandError(f"No reference set is called “{options['references']}” (there are: {names}).")
        image_set_id = None
        if options["image_set"]:
            image_set = ImageSet.objects.filter(name=options["image_set"]).first()
            if image_set is None:
                raise CommandError(f"No image set is called “{options['image_set']}”.")
            image_set_id = image_set.pk
        run = metric_run_create(
            name=options["name"],
            language_code=options["language"],
            system_names=options["systems"].split(","),
            reference_set_id=reference_set.pk,
            image_set_id=image_set_id,
            metrics=options["metrics"],
            image_orientation=options["image_orientation"],
            cider_df=options["cider_df"],
            scheme=options["scheme"],
            clip_model_name=options["clip_model"],
        )
        run.refresh_from_db()
        self.say(
            f"Metric run #{run.pk} “{run.name}”: {run.chunks_total} chunks; metrics {', '.join(run.metrics)}."
        )
        self.finish(run, wait=options["wait"])

    def handle_follow(self, options):
        self.finish(metric_run_get(run_id=options["run_id"]), wait=True)

    def handle_resume(self, options):
        result = metric_run_resume(run_id=options["run_id"])
        if result.requeued:
            self.say(f"Metric run #{result.job.pk}: {result.requeued} chunks queued again.")
        elif result.running:
            self.say(f"Metric run #{result.job.pk}: nothing to resume; {result.running} chunks are running.")
        else:
            self.say(f"Metric run #{result.job.pk}: nothing to resume.")
        self.finish(MetricRun.objects.get(pk=result.job.pk), wait=options["wait"])

    def handle_show(self, options):
        run = metric_run_get(run_id=options["run_id"])
        out = self.stdout.write
        out(f"Metric run #{run.pk} “{run.name}”")
        out(f"  status      {run.status}" + (f" — {run.error}" if run.error else ""))
        for note in self.not_computed(run):
            out(f"  note        {note}")
        out(f"  progress    {run.chunks_done}/{run.chunks_total} chunks")
        out(f"  language    {run.language.code}")
        out(f"  systems     {', '.join(s.name for s in run.systems.all())}")
        out(f"  references  {run.reference_set.name}")
        out(
            f"  images      {run.image_set.name if run.image_set else 'every image with references and a caption'}"
        )
        out(f"  metrics     {', '.join(run.metrics)}")
        out(f"  params      {self.pairs(run.params)}")
        out(f"  versions    {self.pairs(run.versions)}")
        for names, signature in group_signatures(run.metrics, run.signatures):
            out(f"  signature   {signature}  ({', '.join(names)})")
        for label, value in (
            ("created", run.created_at),
            ("queued", run.queued_at),
            ("started", run.started_at),
            ("finished", run.finished_at),
        ):
            if value:
                out(f"  {label:<11} {value:%Y-%m-%d %H:%M:%S}")
        if run.timings:
            out(f"  timings     {self.pairs(run.timings)}")
        failed = run.chunks.exclude(error="").select_related("system")
        for chunk in failed[:10]:
            out(f"  chunk {chunk.system.name}/{chunk.kind}/{chunk.index} ({chunk.status}): {chunk.error}")
        self.table(run)

    def handle_list(self, options):
        runs = list(metric_run_queryset()[: options["limit"]])
        if not runs:
            self.stdout.write("No metric runs yet.")
            return
        self.stdout.write(f"{'id':>5}  {'status':<9}  {'progress':>8}  {'lang':<5}  {'started':<16}  name")
        for run in runs:
            started = f"{run.started_at:%Y-%m-%d %H:%M}" if run.started_at else "–"
            progress = f"{run.chunks_done}/{run.chunks_total}"
            self.stdout.write(
                f"{run.pk:>5}  {run.status:<9}  {progress:>8}  {run.language.code:<5}  {started:<16}  {run.name}"
            )

    # --- helpers ---------------------------------------------------------------------------

    def say(self, text: str) -> None:
        if self.verbosity >= 1:
            self.stdout.write(text)

    @staticmethod
    def not_computed(run: MetricRun) -> list[str]:
        return [
            f"{metric} not computed for {system}: {reason}"
            for metric, by_system in sorted((run.not_computed or {}).items())
            for system, reason in sorted(by_system.items())
        ]

    @staticmethod
    def pairs(mapping: dict) -> str:
        return ", ".join(f"{key}={value}" for key, value in mapping.items()) or "–"

    def finish(self, run: MetricRun, *, wait: bool) -> None:
        """Follow the run if asked (or already finished), then print its scores or its error."""
        if not run.is_finished:
            if not wait:
                self.say(f"Queued. Follow it with: manage.py metric_run follow {run.pk}")
                return
            run = self.follow(run)
        run = metric_run_get(run_id=run.pk)
        self.table(run)
        for note in self.not_computed(run):
            self.stderr.write(f"Note: {note}")
        if run.status == RunStatus.FAILED:
            raise CommandError(
                f"Metric run #{run.pk} failed: {run.error}\nResume it with: manage.py metric_run resume {run.pk}"
            )

    def follow(self, run: MetricRun) -> MetricRun:
        stream = getattr(self.stderr, "_out", sys.stderr)
        hinted = False
        waited = time.monotonic()
        with tqdm(total=run.chunks_total, unit="chunk", file=stream, disable=self.verbosity < 1) as bar:
            try:
                while True:
                    run.refresh_from_db()
                    bar.n = run.chunks_done
                    bar.set_postfix_str(run.status, refresh=False)
                    bar.refresh()
                    if run.is_finished:
                        return run
                    if (
                        not hinted
                        and run.status in (RunStatus.PENDING, RunStatus.QUEUED)
                        and time.monotonic() - waited > NO_WORKER_HINT_SECONDS
                    ):
                        bar.write(
                            "Still queued: is a Celery worker running? (celery -A config worker)", file=stream
                        )
                        hinted = True
                    time.sleep(POLL_SECONDS)
            except KeyboardInterrupt:
                raise CommandError(
                    f"Stopped following; the run goes on. Follow it again: manage.py metric_run follow {run.pk}"
                ) from None

    def table(self, run: MetricRun) -> None:
        table = corpus_table(run)
        if not any(value is not None for _, values in table.rows for value in values):
            return
        width = max(len(name) for name, _ in table.rows)
        widths = [max(len(metric), 7) for metric in table.metrics]
        self.stdout.write("")
        self.stdout.write(
            f"{'system':<{width}}  " + "  ".join(f"{m:>{w}}" for m, w in zip(table.metrics, widths))
        )
        for name, values in table.rows:
            cells = ["–" if v is None else f"{v:.4f}" for v in values]
            self.stdout.write(f"{name:<{width}}  " + "  ".join(f"{c:>{w}}" for c, w in zip(cells, widths)))
