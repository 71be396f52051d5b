"""Issue 16's login-variant probe, bounded: how many password guesses for one account get through.

Starts gunicorn on 127.0.0.1 (SQLite in a temporary folder, the Redis cache) for the code in
``--source`` (default: this checkout), creates the account ``p033``, and sends, each from its
own loopback source address (127.0.0.2 …), ``--attempts`` wrong guesses under each of 12
spellings of ``p033``; then, while the plain name is limited, the right password typed as
``" p033"``. At most 12 × attempts + 3 requests, all to 127.0.0.1, each with a 10 s timeout.

    .venv/bin/python benchmarks/probe_login_variants.py [--source DIR] [--attempts 10] [--rate 10/m]
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "probe-pass-2026-long"  # noqa: S105
VARIANTS = [
    "p033",
    " p033",
    "p033 ",
    "\tp033",
    "\uff50033",
    "p\uff1033",
    "\u3000p033",
    "\xa0p033",
    "p033\n",
    "\u2003p033",
    "\uff50\uff10\uff13\uff13",
    " \uff50033 ",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(port, method, path, *, source="127.0.0.1", body=None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(source, 0))
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read().decode("utf-8", "replace")
    finally:
        conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--source", type=Path, default=ROOT, help="the checkout to serve")
    parser.add_argument("--attempts", type=int, default=10, help="wrong guesses per spelling (≤ 20)")
    parser.add_argument("--rate", default="10/m", help="LOGIN_RATE_LIMIT")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/7")
    args = parser.parse_args()
    attempts = min(args.attempts, 20)
    python = str(ROOT / ".venv" / "bin" / "python")
    tmp = Path(tempfile.mkdtemp(prefix="login-probe-"))
    env = dict(
        os.environ,
        DJANGO_SETTINGS_MODULE="config.settings.base",
        DJANGO_DEBUG="False",
        DATABASE_URL=f"sqlite:///{tmp / 'probe.sqlite3'}",
        REDIS_URL=args.redis_url,
        LOGIN_RATE_LIMIT=args.rate,
    )
    env.pop("CELERY_BROKER_URL", None)
    run = dict(cwd=args.source, env=env, check=True)
    subprocess.run([python, "manage.py", "migrate", "-v0"], **run)  # noqa: S603
    subprocess.run(  # noqa: S603
        [python, "-c", "import redis,sys; redis.Redis.from_url(sys.argv[1]).flushdb()", args.redis_url], **run
    )
    create = f"from django.contrib.auth.models import User; User.objects.create_user('p033', password='{PASSWORD}')"
    subprocess.run([python, "manage.py", "shell", "-c", create], **run)  # noqa: S603
    port = free_port()
    server = subprocess.Popen(  # noqa: S603
        [
            python,
            "-m",
            "gunicorn",
            "config.wsgi",
            "-w",
            "2",
            "-b",
            f"127.0.0.1:{port}",
            "--log-level",
            "warning",
        ],
        cwd=args.source,
        env=env,
    )
    try:
        for _ in range(100):
            try:
                request(port, "GET", "/healthz")
                break
            except OSError:
                time.sleep(0.2)
        status, headers, page = request(port, "GET", "/accounts/login/")
        cookie = headers["Set-Cookie"].split(";")[0]
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)

        def login(username, password, source):
            body = urllib.parse.urlencode(
                {"username": username, "password": password, "csrfmiddlewaretoken": token}
            )
            head = {
                "Cookie": cookie,
                "Content-Type": "application/x-www-form-urlencoded",
                "Referer": "http://127.0.0.1/",
            }
            return request(port, "POST", "/accounts/login/", source=source, body=body, headers=head)

        counts = {"checked (200)": 0, "limited (429)": 0, "other": 0}
        started = time.monotonic()
        n = 0
        for variant in VARIANTS:
            for _ in range(attempts):
                n += 1
                status, _, _ = login(variant, "wrong-guess", f"127.0.{n // 250}.{n % 250 + 2}")
                key = {200: "checked (200)", 429: "limited (429)"}.get(status, "other")
                counts[key] += 1
        elapsed = time.monotonic() - started
        plain, _, _ = login("p033", PASSWORD, "127.0.9.1")
        spaced, spaced_headers, _ = login(" p033", PASSWORD, "127.0.9.2")
        print(f"source: {args.source}  rate: {args.rate}  spellings: {len(VARIANTS)} × {attempts}")
        print(f"guesses sent: {n} in {elapsed:.1f} s; " + ", ".join(f"{k}: {v}" for k, v in counts.items()))
        print(
            f"right password as 'p033': {plain}; as ' p033': {spaced} (Retry-After: {spaced_headers.get('Retry-After')})"
        )
    finally:
        server.terminate()
        server.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
