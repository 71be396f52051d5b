"""The web processes' serving settings (config/gunicorn.py), as gunicorn itself reads them: one request per
process at a time (sync workers), a few processes per core, downloads not cut at 30 s, and every value
changeable from the environment (docs/operations.md, "Web tier")."""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SERVING_ENV = (
    "WEB_CONCURRENCY",
    "GUNICORN_WORKER_CLASS",
    "GUNICORN_THREADS",
    "GUNICORN_TIMEOUT",
    "GUNICORN_KEEPALIVE",
    "GUNICORN_BIND",
)


def _config(monkeypatch, **env):
    from gunicorn.app.wsgiapp import WSGIApplication

    for name in SERVING_ENV:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "argv", ["gunicorn", "-c", "config/gunicorn.py", "config.wsgi"])
    return WSGIApplication().cfg


def test_by_default_each_process_serves_one_request_at_a_time_two_processes_per_core(monkeypatch):
    cfg = _config(monkeypatch)
    assert cfg.worker_class_str == "sync"
    assert cfg.threads == 1
    assert cfg.workers == 2 * (os.cpu_count() or 1)
    assert cfg.timeout == 300  # a streamed export is not cut at gunicorn's default 30 s
    assert cfg.address == [("0.0.0.0", 8000)]  # noqa: S104 - behind the TLS proxy


def test_every_value_can_be_changed_from_the_environment(monkeypatch):
    cfg = _config(
        monkeypatch,
        WEB_CONCURRENCY="4",
        GUNICORN_WORKER_CLASS="gthread",
        GUNICORN_THREADS="8",
        GUNICORN_TIMEOUT="60",
        GUNICORN_KEEPALIVE="5",
        GUNICORN_BIND="127.0.0.1:9000",
    )
    assert (cfg.workers, cfg.worker_class_str, cfg.threads, cfg.timeout, cfg.keepalive) == (
        4,
        "gthread",
        8,
        60,
        5,
    )
    assert cfg.address == [("127.0.0.1", 9000)]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_configured_server_answers_and_closes_each_connection(tmp_path):
    """gunicorn started with the file as documented (two processes) answers the health check; a sync
    process closes the connection after its answer, so the next request goes to whichever is free."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GUNICORN_", "WEB_CONCURRENCY"))}
    env.update(WEB_CONCURRENCY="2", GUNICORN_BIND=f"127.0.0.1:{port}", PYTHONPATH=str(ROOT))
    env.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    gunicorn = Path(sys.executable).with_name("gunicorn")
    log = open(tmp_path / "gunicorn.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [str(gunicorn), "-c", "config/gunicorn.py", "config.wsgi"], cwd=ROOT, env=env, stdout=log, stderr=log
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, (tmp_path / "gunicorn.log").read_text()
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                conn.request("GET", "/healthz")
                response = conn.getresponse()
                break
            except OSError:
                assert time.monotonic() < deadline, (tmp_path / "gunicorn.log").read_text()
                time.sleep(0.2)
        assert response.status == 200
        assert response.read() == b"ok"
        assert response.getheader("Connection", "").lower() == "close"
        conn.close()
    finally:
        proc.terminate()
        proc.wait(20)
        log.close()
