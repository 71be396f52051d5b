"""gunicorn's settings for the web processes: ``gunicorn -c config/gunicorn.py config.wsgi``.

Sized for the annotator pages on a 2-core machine (docs/operations.md, "Web tier"); each value can be
changed from the environment without editing this file. The load benchmark serves a tree with this
file (benchmarks/load_annotators.py), so its figures are those of the documented deployment.
"""

import os

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")  # noqa: S104 - behind the TLS proxy
# Processes run the Python of a request, one core each at a time; threads fill each process's waits
# on PostgreSQL. A request is mostly Python, so a few threads per process are enough: more only
# make them take turns on one interpreter lock, which costs CPU (docs/operations.md, "Web tier").
workers = int(os.environ.get("WEB_CONCURRENCY", "4"))
worker_class = os.environ.get("GUNICORN_WORKER_CLASS", "gthread")
threads = int(os.environ.get("GUNICORN_THREADS", "8"))
# Browsers keep a connection open between clicks; gunicorn's default of 2 s would make most of an
# annotator's pauses reconnect. Idle connections wait in each process's poller, not on a thread.
keepalive = int(os.environ.get("GUNICORN_KEEPALIVE", "10"))
# Idle connections each process keeps open at most (the annotators of a crowd study, with room).
worker_connections = int(os.environ.get("GUNICORN_WORKER_CONNECTIONS", "1000"))
