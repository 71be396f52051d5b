"""Score a COCO results file against reference captions, offline and without the database."""

import hashlib
import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from core.errors import DomainError
from core.tokenisation import SCHEME_NAMES, default_scheme_name
from evaluation.metrics.clip.embedding import IMAGE_ORIENTATIONS
from evaluation.metrics.signatures import clip_signature, group_signatures
from evaluation.metrics.text.formats import FormatError, read_coco_results, read_references
from evaluation.metrics.text.schemes import PRETOKENIZED, SchemeError
from evaluation.models import CLIP_METRICS, TEXT_METRICS
from evaluation.runs.plan import meteor_config, metrics_parse

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".webp", ".gif", ".bmp", ".tif", ".tiff"}
# Exit status when the scores were printed but a requested metric could not be computed (METEOR
# without Java): scripts notice, and the figures that were computed are still on stdout.
EXIT_NOT_COMPUTED = 3


class Command(BaseCommand):
    help = (
        'Score machine captions (COCO results: [{"image_id", "caption"}]) against references (COCO '
        "annotations or an XM3600 captions file) and print the corpus scores: BLEU-1..4, ROUGE-L, CIDEr, "
        "CIDEr-D, METEOR (METEOR 1.5 jar, needs Java), and CLIPScore / RefCLIPScore when --images is given. "
        "The offline counterpart of the COCO evaluation server; touches no database. Exit status 0: every "
        f"requested metric printed; {EXIT_NOT_COMPUTED}: the others printed, but some (METEOR without Java) "
        "could not be computed, the reason on stderr; 1: nothing scored (bad input)."
    )
    # Nothing here needs the database or the project's checks.
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument(
            "--results", type=Path, required=True, help="COCO results .json (the candidates)."
        )
        parser.add_argument(
            "--references", type=Path, required=True, help="COCO annotations .json or XM3600 captions .jsonl."
        )
        parser.add_argument(
            "--language", required=True, help="Language code (XM3600 block, default tokenisation scheme)."
        )
        parser.add_argument(
            "--metrics",
            nargs="+",
            help="Metric names or the groups text, clip, all (default: the text metrics, plus the CLIP metrics "
            "with --images).",
        )
        parser.add_argument(
            "--scheme",
            choices=SCHEME_NAMES,
            help="Tokenisation scheme (default: the language's default: coco-ptb for en, char for zh, ja, th "
            "and the other languages written without spaces, whitespace otherwise).",
        )
        parser.add_argument(
            "--pretokenized",
            action="store_true",
            help="Both files are already tokenised (e.g. by the COCO server's PTB tokenizer): split on "
            "spaces and change nothing else (signature tok:pretokenized). Reproduces the server's figures "
            "on its own tokenised files.",
        )
        parser.add_argument(
            "--cider-df",
            type=Path,
            metavar="FILE",
            help="Take CIDEr's document frequencies from this references file (same formats as --references, "
            "tokenised the same way) instead of the scored images' references (the COCO server's behaviour).",
        )
        parser.add_argument("--per-caption", action="store_true", help="Also print every caption's scores.")
        parser.add_argument("--format", choices=["text", "json"], default="text", help="Output format.")
        clip = parser.add_argument_group("CLIPScore")
        clip.add_argument("--images", type=Path, help="Folder of the images, named <image_id>.<ext>.")
        clip.add_argument("--clip-model", help="open_clip model name (default: the CLIP_MODEL setting).")
        clip.add_argument(
            "--clip-pretrained", help="open_clip pretrained tag (default: the CLIP_PRETRAINED setting)."
        )
        clip.add_argument(
            "--clip-checkpoint", type=Path, help="Local weights file (default: CLIP_CHECKPOINT)."
        )
        clip.add_argument(
            "--clip-config", type=Path, help="open_clip architecture config .json for a custom model."
        )
        clip.add_argument(
            "--prompt-prefix", help="Text put before every caption (default: CLIP_PROMPT_PREFIX)."
        )
        clip.add_argument(
            "--image-orientation",
            choices=IMAGE_ORIENTATIONS,
            help="exif: turn each image upright by its EXIF orientation tag, as annotators see it; stored: "
            "the pixels as stored, as jmhessel's reference CLIPScore code reads them (rotated photos then "
            "score differently). Default: the CLIP_IMAGE_ORIENTATION setting. Printed with the scores.",
        )
        clip.add_argument("--device", help="cpu or cuda (default: cuda when available).")

    def handle(self, *args, **options):
        try:
            metrics = metrics_parse(
                options["metrics"] or (["text", "clip"] if options["images"] else ["text"])
            )
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        text_metrics = [m for m in metrics if m in TEXT_METRICS]
        clip_metrics = [m for m in metrics if m in CLIP_METRICS]
        if clip_metrics and not options["images"]:
            raise CommandError(f"{', '.join(clip_metrics)} need the images: give --images DIR.")

        language = options["language"]
        try:
            results = read_coco_results(options["results"])
            references = read_references(options["references"], language)
        except FormatError as exc:
            raise CommandError(str(exc)) from None
        candidates, refs = self.match(
            options["results"], options["references"], results, references, options["verbosity"]
        )
        df_references, df_name = None, None
        if options["cider_df"]:
            try:
                df_references = read_references(options["cider_df"], language)
            except FormatError as exc:
                raise CommandError(f"--cider-df: {exc}") from None
            except OSError as exc:
                raise CommandError(f"--cider-df {options['cider_df']}: cannot be read ({exc}).") from None
            digest = hashlib.sha256(options["cider_df"].read_bytes()).hexdigest()
            df_name = f"file:{digest[:12]}"

        corpus: dict[str, float] = {}
        per_caption: dict[str, dict] = {}
        self.image_orientation = None  # set when CLIP metrics are scored
        not_computed: dict[str, str] = {}
        signatures: dict[str, str] = {}
        scheme = (
            PRETOKENIZED if options["pretokenized"] else options["scheme"] or default_scheme_name(language)
        )
        if text_metrics:
            from evaluation.metrics.text.scoring import score_texts, score_tokens

            if options["pretokenized"]:
                report = score_tokens(
                    {k: c.split() for k, c in candidates.items()},
                    {k: [r.split() for r in rs] for k, rs in refs.items()},
                    metrics=text_metrics,
                    language=language,
                    meteor=meteor_config(),
                    df_references=None
                    if df_references is None
                    else {k: [r.split() for r in rs] for k, rs in df_references.items()},
                    df_name=df_name,
                )
            else:
                try:
                    report = score_texts(
                        candidates,
                        refs,
                        language=language,
                        scheme=scheme,
                        metrics=text_metrics,
                        meteor=meteor_config(),
                        df_references=df_references,
                        df_name=df_name,
                    )
                except SchemeError as exc:
                    raise CommandError(str(exc)) from None
            corpus |= report.corpus
            signatures |= {m: report.signature_of(m) for m in report.metrics}
            per_caption |= report.per_caption
            not_computed |= report.not_computed
            if options["verbosity"] >= 1 and {"CIDEr", "CIDEr-D"} & set(text_metrics):
                self.stderr.write(f"CIDEr document frequencies: {report.df_source}.")
            if options["verbosity"] >= 1 and report.meteor_setting:
                self.stderr.write(f"METEOR: {report.meteor_setting}.")
            if options["verbosity"] >= 2 and report.bleu_stats is not None:
                stats = report.bleu_stats
                self.stderr.write(
                    f"BLEU: reference length {stats.reflen}, test length {stats.testlen}, matching n-grams "
                    f"{' / '.join(str(n) for n in stats.correct)}"
                )
        if clip_metrics:
            clip_corpus, clip_per_caption, clip_sig = self.clip_scores(
                options, candidates, refs, clip_metrics
            )
            signatures |= dict.fromkeys(clip_metrics, clip_sig)
            corpus |= clip_corpus
            per_caption |= clip_per_caption
        computed = [m for m in metrics if m in corpus]
        corpus = {m: corpus[m] for m in computed}
        if options["verbosity"] >= 1:
            self.stderr.write(
                f"{len(candidates)} captions scored against {sum(len(r) for r in refs.values())} references "
                f"(tokenisation scheme: {scheme})."
            )
        self.output(options, computed, corpus, per_caption, candidates, not_computed, signatures)
        if not_computed:
            notes = "; ".join(f"{metric} not computed: {reason}" for metric, reason in not_computed.items())
            raise CommandError(
                f"{notes}. The other metrics above are complete (exit status {EXIT_NOT_COMPUTED}).",
                returncode=EXIT_NOT_COMPUTED,
            )

    # --- matching -----------------------------------------------------------------------------

    def match(self, results_path, references_path, results, references, verbosity):
        """Candidates and references keyed by the results' image ids; an id without references is an error."""
        by_text = {str(key): texts for key, texts in references.items()}
        candidates, refs = {}, {}
        for entry, (image_id, caption) in enumerate(results.items()):
            texts = by_text.get(str(image_id))
            if not texts:
                raise CommandError(
                    f"{results_path}: entry {entry}: image_id {image_id!r} has no reference captions in "
                    f"{references_path}"
                )
            candidates[image_id] = caption
            refs[image_id] = texts
        if not candidates:
            raise CommandError(f"{results_path}: no captions to score.")
        unused = len(by_text) - len(candidates)
        if unused > 0 and verbosity >= 1:
            self.stderr.write(
                f"{unused} images of the references have no caption in the results (not scored)."
            )
        return candidates, refs

    # --- CLIP -----------------------------------------------------------------------------------

    def clip_scores(self, options, candidates, refs, clip_metrics):
        from evaluation.metrics.clip import ClipUnavailable, InMemoryEmbeddingCache, load_clip, score_clip

        folder = options["images"]
        if not folder.is_dir():
            raise CommandError(f"--images {folder}: no such folder.")
        files = {}
        for path in sorted(folder.iterdir()):
            if path.suffix.lower() in IMAGE_SUFFIXES and path.is_file():
                files.setdefault(path.stem, path)
        images = {}
        for entry, image_id in enumerate(candidates):
            path = files.get(str(image_id))
            if path is None:
                raise CommandError(
                    f"{options['results']}: entry {entry}: no image file for image_id {image_id!r} in {folder} "
                    f"(expected {image_id}.jpg, .png, …)"
                )
            images[image_id] = path

        checkpoint = options["clip_checkpoint"] or (
            None if options["clip_pretrained"] else settings.CLIP_CHECKPOINT
        )
        pretrained = options["clip_pretrained"]
        if pretrained is None and not checkpoint:
            pretrained = settings.CLIP_PRETRAINED
        model_config = None
        if options["clip_config"]:
            try:
                model_config = json.loads(Path(options["clip_config"]).read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise CommandError(
                    f"--clip-config {options['clip_config']}: cannot be read ({exc})."
                ) from None
        try:
            loaded = load_clip(
                options["clip_model"] or settings.CLIP_MODEL,
                pretrained or None,
                checkpoint_path=checkpoint or None,
                device=options["device"],
                model_config=model_config,
            )
        except (ClipUnavailable, ValueError) as exc:
            raise CommandError(str(exc)) from None
        prefix = settings.CLIP_PROMPT_PREFIX if options["prompt_prefix"] is None else options["prompt_prefix"]
        self.image_orientation = options["image_orientation"] or settings.CLIP_IMAGE_ORIENTATION
        try:
            report = score_clip(
                loaded,
                candidates,
                images,
                refs if "RefCLIPScore" in clip_metrics else None,
                prompt_prefix=prefix,
                cache=InMemoryEmbeddingCache(),
                image_orientation=self.image_orientation,
            )
        except OSError as exc:  # an unreadable or broken image file
            raise CommandError(f"an image cannot be read: {exc}") from None
        corpus = {"CLIPScore": report.corpus_clipscore}
        per_caption = {"CLIPScore": report.clipscore}
        if report.refclipscore is not None:
            corpus["RefCLIPScore"] = report.corpus_refclipscore
            per_caption["RefCLIPScore"] = report.refclipscore
        if options["verbosity"] >= 1:
            self.stderr.write(
                f"CLIP model: {loaded.model_id}; prompt prefix: {prefix!r}; "
                f"image orientation: {self.image_orientation}."
            )
        signature = clip_signature(
            model=loaded.model_name,
            pretrained=loaded.pretrained or "",
            checkpoint=loaded.checkpoint_path or "",
            model_id=loaded.model_id,
            prompt_prefix=prefix,
            orientation=self.image_orientation,
        )
        return {m: corpus[m] for m in clip_metrics}, {m: per_caption[m] for m in clip_metrics}, signature

    # --- output ---------------------------------------------------------------------------------

    def output(self, options, metrics, corpus, per_caption, candidates, not_computed, signatures):
        if options["format"] == "json":
            data: dict = dict(corpus)
            if self.image_orientation is not None:
                data["image_orientation"] = self.image_orientation
            if not_computed:
                data["not_computed"] = not_computed
            data["signatures"] = {m: signatures[m] for m in metrics}
            if options["per_caption"]:
                data["per_caption"] = [
                    {
                        "image_id": image_id,
                        "caption": caption,
                        **{m: per_caption[m][image_id] for m in metrics},
                    }
                    for image_id, caption in candidates.items()
                ]
            self.stdout.write(json.dumps(data, ensure_ascii=False, indent=2))
            return
        if not metrics:
            return
        width = max(len(m) for m in metrics)
        for metric in metrics:
            self.stdout.write(f"{metric:<{width}}  {corpus[metric]:.3f}")
        if self.image_orientation is not None:
            self.stdout.write(f"image_orientation  {self.image_orientation}")
        for names, signature in group_signatures(metrics, signatures):
            self.stdout.write(f"signature ({', '.join(names)}): {signature}")
        if options["per_caption"]:
            self.stdout.write("")
            self.stdout.write("\t".join(["image_id", *metrics]))
            for image_id in candidates:
                self.stdout.write(
                    "\t".join([str(image_id), *(f"{per_caption[m][image_id]:.4f}" for m in metrics)])
                )
