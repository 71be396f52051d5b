"""gunicorn's settings for the web processes: ``gunicorn -c config/gunicorn.py config.wsgi``.

Sized for the annotator pages (docs/operations.md, "Web tier"); each value can be changed from the
environment without editing this file. The load benchmark serves a tree with this file
(benchmarks/load_annotators.py), so its figures are those of the documented deployment.
"""

import os

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")  # noqa: S104 - behind the TLS proxy
# One request at a time per process (gunicorn's sync workers): a process takes a connection only when
# it is free, so no request waits behind a busy process while another one idles, and no two requests
# take turns on one interpreter lock. Two processes per core: enough to keep the cores busy while a
# request waits on PostgreSQL (which runs its part of the work on the same cores), few enough that a
# burst waits in the accept queue and each request then runs at nearly a core's speed, instead of ten
# requests sharing two cores and the heaviest (next batch, submit) taking five times their CPU time.
# Measured at 500 annotators on 2 cores, back to back (docs/operations.md, "Web tier"): 4 processes
# against 10, next-batch p95 586 against 766-828 ms on a slow hour, 57-102 ms on a fast one. Needs a
# buffering proxy in front (nginx's default), which reads slow clients' requests and answers so that
# no process waits on a slow network; long downloads are better served by a second pool (see there).
workers = int(os.environ.get("WEB_CONCURRENCY", str(2 * (os.cpu_count() or 1))))
worker_class = os.environ.get("GUNICORN_WORKER_CLASS", "sync")
threads = int(os.environ.get("GUNICORN_THREADS", "1"))
# A download streams from its process: a large export must not be cut at gunicorn's default 30 s.
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "300"))
# With GUNICORN_WORKER_CLASS=gthread (threads > 1): browsers keep a connection open between clicks,
# and idle connections wait in each process's poller. The sync workers close each connection.
keepalive = int(os.environ.get("GUNICORN_KEEPALIVE", "10"))
worker_connections = int(os.environ.get("GUNICORN_WORKER_CONNECTIONS", "1000"))
