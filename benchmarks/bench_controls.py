"""What rated control items cost the assignment engine: batch_request with and without controls.

Builds one caption campaign of --images images (N=15, K=2) in a throwaway test database (SQLite by
default; PostgreSQL with DATABASE_URL, as test_<name>), then times --requests batch requests, each by
a new annotator (new batch, submitted at once so the next one is a fresh annotator's), first with no
control, then after adding --controls controls at --per-batch per batch. Prints p50/p95 of each and
their ratio: figures from the same run, on the same data.

    .venv/bin/python benchmarks/bench_controls.py [--images 1500] [--controls 100] [--requests 60]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=1500)
    parser.add_argument("--controls", type=int, default=100)
    parser.add_argument("--per-batch", type=int, default=2)
    parser.add_argument("--requests", type=int, default=60)
    args = parser.parse_args()

    setup_test_environment()
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        run(args)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


def run(args) -> None:
    from annotation.assignment.engine import batch_request
    from annotation.models import Assignment, Batch, BatchStage
    from annotation.services.controls import campaign_controls_add
    from tests import factories as f

    german = f.LanguageFactory(code="de", name="German")
    started = time.perf_counter()
    campaign = f.open_caption_campaign(images=args.images, batch_size=15, replication=2, language=german)
    print(
        f"campaign of {args.images} images built in {time.perf_counter() - started:.1f} s ({connection.vendor})"
    )

    def timed(label: str, offset: int) -> list[float]:
        times = []
        for i in range(args.requests):
            annotator = f.AnnotatorFactory(user__username=f"{label}{offset + i}", languages=[german])
            t0 = time.perf_counter()
            batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
            times.append(time.perf_counter() - t0)
            # Done at once: the annotator's next request would be a new batch (stage only; the
            # engine reads nothing else of it).
            Batch.objects.filter(pk=batch.pk).update(stage=BatchStage.SUBMITTED)
            Assignment.objects.filter(batch=batch).update(state="submitted")
        return times

    timed("warm", 0)  # first queries and caches, not counted
    plain = timed("plain", 0)
    campaign_controls_add(
        campaign_id=campaign.pk, mismatched=args.controls, controls_per_batch=args.per_batch, seed=1
    )
    controlled = timed("ctrl", 0)

    def show(label, times):
        p50 = statistics.median(times) * 1000
        p95 = statistics.quantiles(times, n=20)[-1] * 1000
        print(f"{label:<28} p50 {p50:7.1f} ms   p95 {p95:7.1f} ms   ({len(times)} requests)")
        return p50, p95

    a = show("batch_request, no controls", plain)
    b = show(f"with {args.controls} controls, {args.per_batch}/batch", controlled)
    print(f"ratio with/without: p50 {b[0] / a[0]:.2f}x, p95 {b[1] / a[1]:.2f}x")


if __name__ == "__main__":
    main()
