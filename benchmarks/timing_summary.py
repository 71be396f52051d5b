#!/usr/bin/env python
"""Where a request's time goes inside the server, from ``benchmarks.timed_wsgi``'s records.

    BENCH_TIMING_DIR=/tmp/t .venv/bin/python benchmarks/load_annotators.py --wsgi benchmarks.timed_wsgi ...
    .venv/bin/python benchmarks/timing_summary.py /tmp/t

Per request type: the wall time inside the application (p50, p95), and for all requests and for the
slowest 5% the mean of: CPU of the request's own thread, database calls (wall), and the rest (ready
to run but waiting for the interpreter lock or a core, and the commit).
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

from load_annotators import percentile  # the client's percentiles: the two tables read alike

KINDS = [
    ("next_batch", "POST", re.compile(r"^/work/campaign/\d+/work/$")),
    ("screen1", "GET", re.compile(r"^/work/batch/\d+/rate/$")),
    ("screen2", "GET", re.compile(r"^/work/batch/\d+/write/$")),
    ("rating", "POST", re.compile(r"/rating/$")),
    ("open_writing", "POST", re.compile(r"/open-writing/$")),
    ("draft", "POST", re.compile(r"/draft/$")),
    ("report", "POST", re.compile(r"/report/$")),
    ("submit", "POST", re.compile(r"/submit/$")),
]


def main(folder: str) -> None:
    rows = defaultdict(list)
    for path in Path(folder).glob("timing-*.tsv"):
        for line in path.read_text().splitlines():
            method, url, wall, cpu, db, queries = line.split("\t")
            kind = next((k for k, m, rx in KINDS if m == method and rx.search(url)), "other")
            rows[kind].append((float(wall), float(cpu), float(db), int(queries)))
    print(
        f"  {'request':<13}{'n':>6}{'p50':>7}{'p95':>7}   all: {'cpu':>5}{'db':>6}{'rest':>6}   slowest 5%: {'wall':>6}{'cpu':>6}{'db':>6}{'rest':>6}"
    )
    for kind, _m, _rx in [*KINDS, ("other", "", None)]:
        values = sorted(rows.get(kind, []))
        if not values:
            continue
        walls = [v[0] for v in values]
        p95 = percentile(walls, 95)
        tail = [v for v in values if v[0] >= p95]

        def mean(part, i):
            return 1000 * sum(v[i] for v in part) / len(part)

        def rest(part):
            return 1000 * sum(v[0] - v[1] - v[2] for v in part) / len(part)

        print(
            f"  {kind:<13}{len(values):>6}{1000 * percentile(walls, 50):>7.1f}{1000 * p95:>7.1f}"
            f"        {mean(values, 1):>5.1f}{mean(values, 2):>6.1f}{rest(values):>6.1f}"
            f"               {mean(tail, 0):>6.1f}{mean(tail, 1):>6.1f}{mean(tail, 2):>6.1f}{rest(tail):>6.1f}"
        )


if __name__ == "__main__":
    main(sys.argv[1])
