"""gunicorn's settings for the web processes: ``gunicorn -c config/gunicorn.py config.wsgi``.

Sized for the annotator pages (docs/operations.md, "Web tier"); each value can be changed from the
environment without editing this file. The load benchmark serves a tree with this file
(benchmarks/load_annotators.py), so its figures are those of the documented deployment.
"""

import os

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")  # noqa: S104 - behind the TLS proxy
# One request at a time per process (gunicorn's sync workers): a process takes a connection only when
# it is free, so no request waits behind a busy process while another one idles, and no two requests
# take turns on one interpreter lock. A request is mostly Python with waits on PostgreSQL in between,
# so a few processes per core keep the cores busy through those waits. Measured against 4 processes
# of 8 threads on 2 cores at 500 annotators: the slowest 5% of next batches 2 to 5 times faster
# (docs/operations.md, "Web tier"). Needs a buffering proxy in front (nginx's default), which reads
# slow clients' requests and answers so that no process waits on a slow network.
workers = int(os.environ.get("WEB_CONCURRENCY", str(5 * (os.cpu_count() or 1))))
worker_class = os.environ.get("GUNICORN_WORKER_CLASS", "sync")
threads = int(os.environ.get("GUNICORN_THREADS", "1"))
# A download streams from its process: a large export must not be cut at gunicorn's default 30 s.
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "300"))
# With GUNICORN_WORKER_CLASS=gthread (threads > 1): browsers keep a connection open between clicks,
# and idle connections wait in each process's poller. The sync workers close each connection.
keepalive = int(os.environ.get("GUNICORN_KEEPALIVE", "10"))
worker_connections = int(os.environ.get("GUNICORN_WORKER_CONNECTIONS", "1000"))
