"""The platform's WSGI application with a timing record per request, for the load benchmark only.

``load_annotators.py --wsgi benchmarks.timed_wsgi`` serves this instead of ``config.wsgi``; with
``BENCH_TIMING_DIR`` set, each process appends one line per request to its own file there: the
request line, its wall time inside the application, the CPU time of its thread, and the wall time
spent in database calls. Wall minus CPU minus database is the time the request was ready to run but
did not: waiting for the interpreter lock held by another thread of its process, or for a core.
The time a request waits before the application sees it (gunicorn's queue, the network) is what the
client measures beyond the wall time here. Nothing here runs in a deployment.
"""

from __future__ import annotations

import os
import time

from django.db import connection

from config.wsgi import application as _application

_DIR = os.environ.get("BENCH_TIMING_DIR", "")
_out = None


def _file():
    global _out
    if _out is None:
        _out = open(os.path.join(_DIR, f"timing-{os.getpid()}.tsv"), "a", buffering=1)  # noqa: SIM115
    return _out


def application(environ, start_response):
    if not _DIR:
        return _application(environ, start_response)
    db = [0.0, 0]

    def timed(execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            db[0] += time.perf_counter() - started
            db[1] += 1

    wall, cpu = time.perf_counter(), time.thread_time()
    with connection.execute_wrapper(timed):
        body = b"".join(_application(environ, start_response))
    wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
    _file().write(
        f"{environ['REQUEST_METHOD']}\t{environ['PATH_INFO']}\t{wall:.6f}\t{cpu:.6f}\t{db[0]:.6f}\t{db[1]}\n"
    )
    return [body]
