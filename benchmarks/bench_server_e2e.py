"""An XM3600-size entry through the evaluation server end to end: upload, then scoring by Celery workers
of the job engine against PostgreSQL, with pycocoevalcap on the same captions in the same run.

Needs PostgreSQL and Redis, so it is run by a person, never by the test suite:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/captioneval_bench_e2e \\
    CELERY_BROKER_URL=redis://127.0.0.1:6379/9 \\
    .venv/bin/python benchmarks/bench_server_e2e.py [--images 3600] [--languages 36] [--workers 1 2]

The database named in DATABASE_URL is migrated and its benchmarks, submissions, images and references are
DELETED: give it a database of its own.

What is built (not timed): the 36 XM3600 languages, 3,600 images, two references per image and language,
a benchmark with a test phase of the platform's defaults (BLEU-1..4, ROUGE-L, CIDEr-D, METEOR; all
references; the human comparison; public and private halves; 1,000 resamples per split for every interval
and paired test). Captions are made-up lowercase words separated by spaces (a vocabulary per language,
fixed seed), and every language's tokeniser is the platform's ``whitespace`` scheme, so both sides see
the same tokens (what the segmenters cost is in ``bench_schemes.py``). METEOR runs where the jar has the
language (its own setting: en, de, fr, ... with stemming; exact matching for the rest, as the platform
does for every language).

Timed, for each worker count N: ``submission_create`` of the JSON-lines file (read and checked, 129,600
captions stored, 36 scoring units queued), then the wall time until N workers (``celery worker -c 1``
each) have scored every unit and stored the scores. The reference is pycocoevalcap's Bleu(4), Meteor,
Rouge and Cider (the COCO server's CIDEr-D) on the same tokens, all images, once per language: the COCO
server's own work, without halves, intervals, a human comparison or a database. Its Meteor runs the jar
as the COCO server does (``-l en -norm``) for every language.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def synthesize(keys: list[str], codes: list[str], references: int, seed: int):
    rng = random.Random(seed)
    refs: dict[str, dict[str, list[str]]] = {}
    entry: dict[str, dict[str, str]] = {}
    for code in codes:
        vocab = [f"{code}{n}x" for n in range(800)]
        refs[code], entry[code] = {}, {}
        for key in keys:
            topic = rng.sample(vocab, 6)
            refs[code][key] = [
                " ".join(rng.choices(topic + vocab[:40], k=rng.randint(6, 12))) for _ in range(references)
            ]
            own = topic[:4] + rng.sample(vocab, 3)
            entry[code][key] = " ".join(rng.choices(own, k=rng.randint(6, 11)))
    return refs, entry


def results_file(entry: dict[str, dict[str, str]]) -> bytes:
    return "\n".join(
        json.dumps({"image_id": key, "language": code, "caption": text})
        for code, caps in entry.items()
        for key, text in caps.items()
    ).encode()


def build(keys, codes, refs):
    """The benchmark, its languages, images, references and test phase (emptying the database's old ones)."""
    from annotation.models import Image, Language
    from challenges.models import Benchmark, BenchmarkLanguage, Phase, PhaseKind, Submission, Team
    from evaluation.models import ImageSet, Reference, ReferenceSet, ReferenceSetKind

    Submission.objects.all().delete()
    Phase.objects.all().delete()
    Benchmark.objects.all().delete()
    Team.objects.all().delete()
    ImageSet.objects.filter(name="bench-e2e").delete()
    Reference.objects.filter(reference_set__name__startswith="bench-e2e").delete()
    ReferenceSet.objects.filter(name__startswith="bench-e2e").delete()
    Image.objects.filter(key__startswith="e2e-").delete()
    images = Image.objects.bulk_create([Image(key=key, format="PNG") for key in keys], batch_size=2000)
    images = list(Image.objects.filter(key__in=keys).order_by("key"))
    by_key = {image.key: image for image in images}
    benchmark = Benchmark.objects.create(name="XM3600-size bench", slug="xm3600-size-bench")
    for code in codes:
        language, _ = Language.objects.update_or_create(
            code=code, defaults={"name": code, "tokenizer": "whitespace"}
        )
        reference_set = ReferenceSet.objects.create(
            name=f"bench-e2e {code}", language=language, kind=ReferenceSetKind.IMPORTED
        )
        Reference.objects.bulk_create(
            [
                Reference(reference_set=reference_set, image=by_key[key], position=p, text=text)
                for key in keys
                for p, text in enumerate(refs[code][key])
            ],
            batch_size=5000,
        )
        BenchmarkLanguage.objects.create(benchmark=benchmark, language=language, reference_set=reference_set)
    image_set = ImageSet.objects.create(name="bench-e2e")
    image_set.images.set(images)
    phase = Phase.objects.create(
        benchmark=benchmark,
        name="test",
        kind=PhaseKind.TEST,
        is_open=True,
        split_seed=7,
        image_set=image_set,
        max_per_day=100,
        max_total=100,
        max_concurrent=100,
    )
    team = Team.objects.create(name="bench team")
    team.benchmarks.add(benchmark)
    return phase, team


def pycocoevalcap_seconds(keys, codes, refs, entry) -> tuple[float, dict[str, float]]:
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.meteor.meteor import Meteor
    from pycocoevalcap.rouge.rouge import Rouge

    spent = {"BLEU-1..4": 0.0, "METEOR": 0.0, "ROUGE-L": 0.0, "CIDEr-D": 0.0}
    start_all = time.perf_counter()
    for code in codes:
        gts = {k: refs[code][k] for k in keys}
        res = {k: [entry[code][k]] for k in keys}
        for name, make in (
            ("BLEU-1..4", lambda: Bleu(4)),
            ("METEOR", Meteor),
            ("ROUGE-L", Rouge),
            ("CIDEr-D", Cider),
        ):
            start = time.perf_counter()
            scorer = make()  # Meteor() starts its JVM here, once per language as COCOEvalCap does
            if name == "BLEU-1..4":
                scorer.compute_score(gts, res, verbose=0)
            else:
                scorer.compute_score(gts, res)
            if name == "METEOR":
                with scorer.lock:
                    scorer.meteor_p.stdin.close()
                    scorer.meteor_p.kill()
                    scorer.meteor_p.wait()
            spent[name] += time.perf_counter() - start
    return time.perf_counter() - start_all, spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=3600)
    parser.add_argument("--languages", type=int, default=36)
    parser.add_argument("--references", type=int, default=2)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    from bench_clip_workers import services_setup, start_workers, stop_workers

    services_setup("server-e2e-media-")
    from django.core.management import call_command

    from annotation.services.languages import XM3600_LANGUAGES
    from challenges.models import SubmissionScore
    from challenges.services import submission_create
    from core.jobs.models import JobStatus

    call_command("migrate", verbosity=0)
    codes = list(XM3600_LANGUAGES[: args.languages])
    keys = [f"e2e-{i:05d}" for i in range(args.images)]
    refs, entry = synthesize(keys, codes, args.references, args.seed)
    data = results_file(entry)
    phase, team = build(keys, codes, refs)
    from django.contrib.auth import get_user_model

    user, _ = get_user_model().objects.get_or_create(username="bench-e2e")
    team.members.add(user)
    print(
        f"{args.images:,} images x {len(codes)} languages = {args.images * len(codes):,} captions "
        f"({len(data) / 1e6:.1f} MB of JSON lines), {args.references} references each; test phase: "
        f"{', '.join(phase.metrics)}; references {phase.reference_counts}; human comparison "
        f"{'on' if phase.human_comparison else 'off'}; public and private halves; 1,000 resamples per split."
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    log_dir = Path(tempfile.mkdtemp(prefix="server-e2e-logs-"))
    rows = []
    for n in args.workers:
        workers = start_workers(n, 1, env, log_dir)
        try:
            time.sleep(8)  # the workers connect before the clock starts
            started = time.perf_counter()
            submission = submission_create(
                phase_id=phase.pk,
                user=user,
                team_id=team.pk,
                data=data,
                filename="entry.jsonl",
                method_name=f"bench {n} workers",
            )
            uploaded = time.perf_counter() - started
            while True:
                submission.refresh_from_db()
                if submission.status in (JobStatus.SUCCEEDED, JobStatus.FAILED):
                    break
                time.sleep(0.5)
            wall = time.perf_counter() - started
        finally:
            stop_workers(workers)
        if submission.status != JobStatus.SUCCEEDED:
            sys.exit(f"scoring failed: {submission.error} (logs in {log_dir})")
        scores = SubmissionScore.objects.filter(submission=submission)
        meteor = scores.filter(metric="METEOR").count()
        rows.append((n, uploaded, wall, scores.count(), meteor))
        print(
            f"  {n} worker(s): upload {uploaded:.1f} s, scored and stored {wall:.1f} s after the upload began"
        )

    ref_wall, ref_spent = pycocoevalcap_seconds(keys, codes, refs, entry)
    print(f"\n{'':<28}{'upload (s)':>12}{'until scored (s)':>18}{'scores stored':>15}")
    for n, uploaded, wall, count, meteor in rows:
        print(
            f"{f'ours, {n} worker(s)':<28}{uploaded:>12.1f}{wall:>18.1f}{count:>15,}  (METEOR rows {meteor:,})"
        )
    parts = ", ".join(f"{name} {seconds:.1f}" for name, seconds in ref_spent.items())
    print(f"{'pycocoevalcap, 1 process':<28}{'–':>12}{ref_wall:>18.1f}{'–':>15}  ({parts})")
    print(
        "\npycocoevalcap scores each language once on all images; the server scores each twice (all "
        "references and the human comparison) on all images and on both halves, each with 1,000 resamples, "
        f"and stores the rows. Target: under 300 s on one worker ({rows[0][2]:.1f} s)."
    )


if __name__ == "__main__":
    main()
