"""Scale-out of a CLIP metric run: one Celery worker against two, and what the shared cache saves.

Needs PostgreSQL and Redis (a run's chunks are Celery tasks; SQLite cannot serve two worker processes),
so it is run by a person, never by the test suite:

    DATABASE_URL=postgres://USER:PASS@127.0.0.1:5432/captioneval_bench \\
    CELERY_BROKER_URL=redis://127.0.0.1:6379/9 \\
    .venv/bin/python benchmarks/bench_clip_workers.py [--images 64] [--systems 4] [--workers 1 2] [--cores 2]

The database named in DATABASE_URL is migrated and then EMPTIED of runs, captions, images and cached
embeddings: give it a database of its own. The model is open_clip's ``ViT-B-32`` architecture with random
weights saved to a temporary checkpoint (open_clip's tokenizer ships with it, so nothing is downloaded).

For each worker count N it starts N worker processes (``celery worker --pool=prefork -c 1`` each, with
``CLIP_TORCH_THREADS = cores / N`` so the workers share the cores instead of fighting over them), creates
one run (CLIPScore + RefCLIPScore, ``--systems`` systems over ``--images`` images with 2 references each,
chunks of ``--chunk-size`` captions) on an empty embedding cache, waits for it, and prints the wall time
and the counts: images and texts embedded (summed over the chunks' ``timings``) against the distinct rows
in the cache. Embedded = rows means no image or text was embedded twice by the two workers.
"""

from __future__ import annotations

import argparse
import io
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# The project settings (not the test ones, whose media folder is private to each process).
SETTINGS = "config.settings.base"


def services_setup(media_prefix: str) -> None:
    """Refuse to run without a PostgreSQL database and a Redis database of their own (see the docstring),
    point this process and the workers it starts at the project settings with a real broker and one
    media folder, and set Django up."""
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        sys.exit("DATABASE_URL must name a PostgreSQL database of its own (it is emptied): see the docstring")
    if not os.environ.get("CELERY_BROKER_URL", "").startswith("redis://"):
        sys.exit("CELERY_BROKER_URL must name a Redis database: see the docstring")
    os.environ["DJANGO_SETTINGS_MODULE"] = SETTINGS
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "false"
    # One media folder for this process and the workers (DJANGO_MEDIA_ROOT, read by the settings).
    os.environ.setdefault("DJANGO_MEDIA_ROOT", tempfile.mkdtemp(prefix=media_prefix))
    import django

    django.setup()


def start_workers(n: int, threads: int, env: dict, log_dir: Path) -> list[subprocess.Popen]:
    processes = []
    for i in range(n):
        log = open(log_dir / f"worker-{n}-{i}.log", "wb")  # noqa: SIM115
        processes.append(
            subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", "config.celery", "worker", "-l", "warning"]
                + [
                    "--pool=prefork",
                    "-c",
                    "1",
                    "-n",
                    f"bench{n}-{i}@%h",
                    "--without-gossip",
                    "--without-mingle",
                ],
                env={**env, "CLIP_TORCH_THREADS": str(threads)},
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                cwd=ROOT,
            )
        )
    return processes


def stop_workers(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=64)
    parser.add_argument("--systems", type=int, default=4)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--chunk-size", type=int, default=16)
    args = parser.parse_args()
    services_setup("clip-bench-media-")
    import numpy as np
    import torch
    from django.core.files.base import ContentFile
    from django.core.management import call_command
    from PIL import Image as PILImage

    from annotation.models import CaptioningSystem, Language, SystemCaption
    from evaluation.metrics.clip import ensure_torchvision_loadable
    from evaluation.models import ClipEmbedding, MetricRun, RunStatus
    from tests import factories as f

    call_command("migrate", verbosity=0)
    ensure_torchvision_loadable()
    import open_clip

    checkpoint = Path(tempfile.mkdtemp(prefix="clip-bench-")) / "vit-b-32-random.pt"
    torch.manual_seed(0)
    torch.save(open_clip.create_model("ViT-B-32").state_dict(), checkpoint)
    rng = np.random.default_rng(0)
    words = [
        "a",
        "the",
        "man",
        "woman",
        "dog",
        "cat",
        "street",
        "red",
        "blue",
        "small",
        "near",
        "with",
        "two",
        "people",
        "car",
        "tree",
        "house",
    ]

    def caption() -> str:
        return " ".join(rng.choice(words, int(rng.integers(6, 16))))

    MetricRun.objects.all().delete()
    ClipEmbedding.objects.all().delete()
    SystemCaption.objects.all().delete()
    language = Language.objects.get_or_create(code="de", defaults={"name": "German"})[0]
    images = []
    for i in range(args.images):
        buffer = io.BytesIO()
        small = rng.integers(0, 255, (30, 40, 3), dtype=np.uint8)
        PILImage.fromarray(small).resize((640, 480)).save(buffer, "JPEG", quality=90)
        image = f.ImageFactory(key=f"bench-{i:05d}")
        image.file.save(f"bench-{i:05d}.jpg", ContentFile(buffer.getvalue()), save=False)
        image.content_hash = __import__("hashlib").sha256(buffer.getvalue()).hexdigest()
        image.save()
        images.append(image)
    systems = [CaptioningSystem.objects.get_or_create(name=f"bench-sys-{s}")[0] for s in range(args.systems)]
    for system in systems:
        SystemCaption.objects.bulk_create(
            [SystemCaption(system=system, image=im, language=language, text=caption()) for im in images]
        )
    f.reference_set_with(
        images, [[caption(), caption()] for _ in images], name="bench-refs", language=language
    )

    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "CLIP_MODEL": "ViT-B-32",
        "CLIP_PRETRAINED": "",
        "CLIP_CHECKPOINT": str(checkpoint),
        "METRIC_CLIP_CHUNK_SIZE": str(args.chunk_size),
    }
    os.environ.update(
        {k: env[k] for k in ("CLIP_MODEL", "CLIP_PRETRAINED", "CLIP_CHECKPOINT", "METRIC_CLIP_CHUNK_SIZE")}
    )
    from django.conf import settings

    settings.CLIP_MODEL, settings.CLIP_PRETRAINED = "ViT-B-32", ""
    settings.CLIP_CHECKPOINT, settings.METRIC_CLIP_CHUNK_SIZE = str(checkpoint), args.chunk_size
    log_dir = Path(tempfile.mkdtemp(prefix="clip-bench-logs-"))
    print(
        f"{args.images} images, {args.systems} systems, 2 references each; chunks of {args.chunk_size}; logs in {log_dir}"
    )
    walls = {}
    for n in args.workers:
        ClipEmbedding.objects.all().delete()
        threads = max(1, args.cores // n)
        workers = start_workers(n, threads, env, log_dir)
        try:
            time.sleep(8)  # the workers connect and load nothing yet: the model loads with the first chunk
            started = time.perf_counter()
            call_command(
                "metric_run", "start", "--language", "de", "--systems", ",".join(s.name for s in systems),
                "--references", "bench-refs", "--metrics", "CLIPScore", "RefCLIPScore", verbosity=0,
            )  # fmt: skip
            run = MetricRun.objects.latest("pk")
            while run.status not in (RunStatus.SUCCEEDED, RunStatus.FAILED):
                time.sleep(0.5)
                run.refresh_from_db()
            walls[n] = time.perf_counter() - started
        finally:
            stop_workers(workers)
        t = run.timings or {}
        image_rows = ClipEmbedding.objects.filter(kind="image").count()
        text_rows = ClipEmbedding.objects.filter(kind="text").count()
        print(
            f"{n} worker(s) x {threads} thread(s): {run.status} in {walls[n]:.1f} s; "
            f"images embedded {t.get('images_embedded')} for {image_rows} distinct, "
            f"texts embedded {t.get('texts_embedded')} for {text_rows} distinct "
            f"(twice: {t.get('images_embedded', 0) - image_rows + t.get('texts_embedded', 0) - text_rows})"
            + (f"; error: {run.error}" if run.error else "")
        )
    if 1 in walls:
        for n, wall in walls.items():
            if n != 1:
                print(f"{n} workers: {walls[1] / wall:.2f}x the speed of 1")


if __name__ == "__main__":
    main()
