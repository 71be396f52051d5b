#!/usr/bin/env python
"""Hostile result files against gunicorn + PostgreSQL: time to refusal and the web worker's extra memory,
for this tree ("after") and another tree of the platform ("before", default: a worktree of 628c61c, the
commit before the streaming parser) in the same run, same inputs, same repeats.

Not a test: it prints a table and PASS/FAIL against the targets of issue 34 for "after".

Per tree:

1. Creates a fresh database (``--db-name`` plus ``_before``/``_after``; dropped first) on the server of
   ``--database-url``, migrates it with that tree's code and fills it with an XM3600-size benchmark
   (``--languages`` languages, a validation phase of ``--images`` images, no references needed to
   refuse a file), a team with one member and the member's API token.
2. Starts gunicorn on 127.0.0.1 with that tree's code and its ``config/gunicorn.py`` (the base settings:
   DEBUG off, the Redis cache), and waits for every worker. Refused files are not rate-limited here
   (``SUBMISSION_REFUSED_RATE`` set far up), so every upload is read: the figures are what one file
   costs; the limit's own effect is checked at the end (the 21st refused file).
3. Each hostile file ``--repeats`` times through the API (token), one at a time: the time from the
   first byte sent to the answer's status line, and the extra memory of the worker that served it:
   every worker's peak is reset before (``/proc/<pid>/clear_refs``), and the largest ``VmHWM`` after,
   less that worker's ``VmRSS`` before, is the figure. Files: the 60 KB bomb (a zip of one member of
   60 MB of ``[[],[],...]``: ``json.loads`` makes 20 million lists of it), 45 MB of random bytes, a zip
   bomb (190 MB of blanks in a 190 KB zip, within ``SUBMISSION_MAX_UNZIPPED_BYTES``), and a 60 MB post to
   the upload page (over ``SUBMISSION_MAX_BYTES``; logged in through the form, with its CSRF token).
4. 8 hostile uploads at once (the three kinds in turn, each client sending again as soon as it is
   answered, for ``--window`` seconds) while one client loads the login page every 50 ms: its
   p50/p95/max, against the same probe with nothing else running. A tree that has not answered by the
   window's end is stopped; a login probe still waiting then counts with the time it waited.

    .venv/bin/python benchmarks/bench_hostile_uploads.py                  # before = 628c61c
    .venv/bin/python benchmarks/bench_hostile_uploads.py --before /tmp/before --repeats 3
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import select
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
MB = 1024 * 1024
PASSWORD = "bench-hostile-Xq7!"
BEFORE_COMMIT = "628c61c"
# Issue 34's targets for "after".
TARGETS = {"bomb_seconds": 1.0, "bomb_mb": 50, "junk_mb": 150, "login_p95": 0.200}
HOSTILE_AT_ONCE = 8


# --- the files ---------------------------------------------------------------------------------------


def zipped(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def hostile_files() -> dict[str, tuple[str, bytes]]:
    """kind -> (file name, bytes), the same for both trees."""
    rng = random.Random(34)
    return {
        "60 KB bomb": ("r.zip", zipped({"de.json": b"[" + b"[]," * 20_000_000 + b"[]]"})),
        "45 MB junk": ("r.json", rng.randbytes(45 * MB)),
        "zip bomb": ("r.zip", zipped({"de.json": b"[" + b" " * (190 * MB) + b"]"})),
    }


def multipart(fields: dict[str, str], filename: str, data: bytes) -> tuple[str, bytes]:
    boundary = "----bench-hostile-34"
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        for name, value in fields.items()
    ]
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{filename}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n".encode()
    )
    return f"multipart/form-data; boundary={boundary}", b"".join(
        [*parts, data, f"\r\n--{boundary}--\r\n".encode()]
    )


# --- HTTP on a bare socket: a server may answer before the body is sent, and close ----------------------


def http_request(port: int, method: str, path: str, headers: dict, body: bytes = b"", timeout: float = 120):
    """(status, headers, body, seconds to the status line). Sends the body in pieces and stops sending
    once an answer arrives (a 413 before the body is read); ``status`` 0 when none came."""
    start = time.perf_counter()
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    if body or method == "POST":
        head += f"Content-Length: {len(body)}\r\n"
    received = b""
    answered_at = None
    try:
        sock.sendall(head.encode() + b"\r\n")
        view = memoryview(body)
        for offset in range(0, len(body), 256 * 1024):
            readable, _, _ = select.select([sock], [], [], 0)
            if readable:
                break
            sock.sendall(view[offset : offset + 256 * 1024])
        sock.settimeout(max(1.0, timeout - (time.perf_counter() - start)))
        while True:
            piece = sock.recv(65536)
            if not piece:
                break
            if answered_at is None:
                answered_at = time.perf_counter()
            received += piece
    except (BrokenPipeError, ConnectionResetError):
        # The server answered and closed while the body was still being sent: read what it said.
        try:
            sock.settimeout(2)
            while piece := sock.recv(65536):
                if answered_at is None:
                    answered_at = time.perf_counter()
                received += piece
        except OSError:
            pass
    except TimeoutError:
        pass
    finally:
        sock.close()
    seconds = (answered_at or time.perf_counter()) - start
    if not received.startswith(b"HTTP/"):
        return 0, {}, b"", seconds
    head_bytes, _, rest = received.partition(b"\r\n\r\n")
    lines = head_bytes.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    answer_headers: dict[str, list[str]] = {}
    for line in lines[1:]:
        key, _, value = line.partition(":")
        answer_headers.setdefault(key.strip().lower(), []).append(value.strip())
    return status, answer_headers, rest, seconds


def cookies_of(headers: dict) -> dict[str, str]:
    jar = {}
    for line in headers.get("set-cookie", []):
        name, _, value = line.split(";", 1)[0].partition("=")
        jar[name.strip()] = value.strip()
    return jar


def cookie_header(jar: dict[str, str]) -> str:
    return "; ".join(f"{k}={v}" for k, v in jar.items())


# --- database, data and server (in the measured tree) ----------------------------------------------------


def populate() -> None:
    """Run with a tree's code (cwd and PYTHONPATH): migrate, fill, print the ids as JSON."""
    sys.path.insert(0, os.getcwd())
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import transaction
    from rest_framework.authtoken.models import Token

    from annotation.models import Image, Language
    from challenges.models import Benchmark, BenchmarkLanguage, Phase, PhaseKind, Team
    from evaluation.models import ImageSet, ReferenceSet, ReferenceSetKind

    call_command("migrate", verbosity=0)
    n_images, n_languages = int(os.environ["BENCH_IMAGES"]), int(os.environ["BENCH_LANGUAGES"])
    with transaction.atomic():
        codes = ["de", "en"] + [f"x{i:02d}" for i in range(max(0, n_languages - 2))]
        languages = [Language.objects.create(code=c, name=f"Language {c}") for c in codes[:n_languages]]
        images = Image.objects.bulk_create(
            [Image(key=str(100_000 + i), format="PNG") for i in range(n_images)], batch_size=2000
        )
        image_set = ImageSet.objects.create(name="bench hostile")
        image_set.images.set(images)
        benchmark = Benchmark.objects.create(name="Hostile", slug="hostile", description="bench")
        for language in languages:
            refs = ReferenceSet.objects.create(
                name=f"bench {language.code}", language=language, kind=ReferenceSetKind.IMPORTED
            )
            BenchmarkLanguage.objects.create(benchmark=benchmark, language=language, reference_set=refs)
        phase = Phase.objects.create(
            benchmark=benchmark,
            name="validation",
            kind=PhaseKind.VALIDATION,
            is_open=True,
            image_set=image_set,
            reference_counts=[0],
            metrics=["BLEU-4", "CIDEr-D"],
            max_per_day=1000,
            max_total=1000,
            max_concurrent=1000,
        )
        team = Team.objects.create(name="bench team")
        team.benchmarks.add(benchmark)
        user = get_user_model().objects.create_user(username="bench-hostile", password=PASSWORD)
        team.members.add(user)
        token = Token.objects.create(user=user).key
    print(json.dumps({"phase": phase.pk, "slug": benchmark.slug, "username": user.username, "token": token}))


def recreate_database(url: str) -> None:
    from urllib.parse import urlparse

    import psycopg2

    parsed = urlparse(url)
    name = parsed.path.lstrip("/")
    if "bench" not in name:
        sys.exit(f"Refusing to drop database {name!r}: its name must contain 'bench'.")
    conn = psycopg2.connect(
        dbname="postgres",
        user=parsed.username,
        password=parsed.password,
        host=parsed.hostname,
        port=parsed.port,
    )
    conn.autocommit = True
    with conn.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        cursor.execute(f'CREATE DATABASE "{name}"')
    conn.close()


def drop_database(url: str) -> None:
    from urllib.parse import urlparse

    import psycopg2

    parsed = urlparse(url)
    conn = psycopg2.connect(
        dbname="postgres",
        user=parsed.username,
        password=parsed.password,
        host=parsed.hostname,
        port=parsed.port,
    )
    conn.autocommit = True
    with conn.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{parsed.path.lstrip("/")}" WITH (FORCE)')
    conn.close()


def server_env(args, url: str, media_root: str, tree: Path) -> dict[str, str]:
    import secrets

    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "CELERY_"))}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings.base",
            "DATABASE_URL": url,
            "DJANGO_DEBUG": "False",
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1,testserver",
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
            "DJANGO_MEDIA_ROOT": media_root,
            "REDIS_URL": args.redis_url,
            "LOGIN_RATE_LIMIT": "100000/m",
            "SUBMISSION_REFUSED_RATE": "1000000/h",
            "DJANGO_LOG_LEVEL": "ERROR",
            "BENCH_IMAGES": str(args.images),
            "BENCH_LANGUAGES": str(args.languages),
            "PYTHONPATH": str(tree),
        }
    )
    return env


def start_server(env: dict, tree: Path, port: int, log_path: Path) -> subprocess.Popen:
    log = open(log_path, "wb")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen(
        [str(ROOT / ".venv" / "bin" / "gunicorn"), "-c", "config/gunicorn.py", "config.wsgi"]
        + ["-b", f"127.0.0.1:{port}", "--graceful-timeout", "5"],
        cwd=tree,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"gunicorn exited with {proc.returncode}; see {log_path}")
        try:
            if http_request(port, "GET", "/healthz", {}, timeout=2)[0] == 200:
                break
        except OSError:
            pass
        time.sleep(0.3)
    else:
        stop_server(proc)
        sys.exit(f"gunicorn did not answer within 120 s; see {log_path}")
    # Every worker answers the login page once, so that none imports the platform during a measurement.
    expected = int(env.get("WEB_CONCURRENCY", str(2 * (os.cpu_count() or 1))))
    deadline = time.monotonic() + 60
    while len(workers_of(proc.pid)) < expected and time.monotonic() < deadline:
        time.sleep(0.3)
    for _ in range(4 * expected):
        http_request(port, "GET", "/accounts/login/", {}, timeout=30)
    return proc


def stop_server(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def workers_of(master: int) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == master:
                pids.append(int(entry.name))
    return pids


def _status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


class WorkerMemory:
    """Extra memory of the worker that served a request: peaks reset before, VmHWM minus VmRSS before."""

    def __init__(self, master: int):
        self.master = master

    def start(self) -> None:
        self.before = {}
        for pid in workers_of(self.master):
            try:
                Path(f"/proc/{pid}/clear_refs").write_text("5")
                self.before[pid] = _status_kb(pid, "VmRSS")
            except OSError:
                continue

    def extra_mb(self) -> float:
        extra = 0
        for pid, rss in self.before.items():
            try:
                extra = max(extra, _status_kb(pid, "VmHWM") - rss)
            except OSError:
                continue
        return extra / 1024


# --- the measurements ------------------------------------------------------------------------------------


def login_session(port: int, username: str) -> dict[str, str]:
    status, headers, _, _ = http_request(port, "GET", "/accounts/login/", {})
    jar = cookies_of(headers)
    body = urlencode({"username": username, "password": PASSWORD, "csrfmiddlewaretoken": jar["csrftoken"]})
    status, headers, _, _ = http_request(
        port,
        "POST",
        "/accounts/login/",
        {
            "Content-Type": "application/x-www-form-urlencoded",
            "Cookie": cookie_header(jar),
        },
        body.encode(),
    )
    jar.update(cookies_of(headers))
    if status != 302 or "sessionid" not in jar:
        sys.exit(f"login through the form failed: HTTP {status}")
    return jar


def api_body(filename: str, content: bytes) -> tuple[str, bytes]:
    return multipart({"method_name": "hostile", "language": "de"}, filename, content)


def api_upload(port: int, data: dict, filename: str, content: bytes, timeout: float = 300, built=None):
    content_type, body = built or api_body(filename, content)
    return http_request(
        port,
        "POST",
        f"/api/challenges/phases/{data['phase']}/submissions/",
        {"Authorization": f"Token {data['token']}", "Content-Type": content_type},
        body,
        timeout=timeout,
    )


def page_upload(port: int, data: dict, jar: dict, filename: str, content: bytes):
    content_type, body = multipart(
        {"csrfmiddlewaretoken": jar["csrftoken"], "method_name": "hostile", "language": "de"},
        filename,
        content,
    )
    return http_request(
        port,
        "POST",
        f"/challenges/phases/{data['phase']}/submit/",
        {"Content-Type": content_type, "Cookie": cookie_header(jar)},
        body,
    )


def probe_login(
    port: int, stop: threading.Event, latencies: list[float], timeout: float, waiting: dict
) -> None:
    while not stop.is_set():
        waiting["since"] = time.perf_counter()
        status, _, _, seconds = http_request(port, "GET", "/accounts/login/", {}, timeout=timeout)
        waiting["since"] = None
        latencies.append(seconds if status == 200 else timeout)
        time.sleep(0.05)


def run_probe(port: int, seconds: float, timeout: float, during=None) -> list[float]:
    """Login-page latencies for ``seconds``; a probe still waiting at the end counts with its wait."""
    stop = threading.Event()
    latencies: list[float] = []
    waiting: dict = {"since": None}
    thread = threading.Thread(target=probe_login, args=(port, stop, latencies, timeout, waiting), daemon=True)
    thread.start()
    time.sleep(seconds)
    stop.set()
    thread.join(timeout if during is None else 10)
    since = waiting["since"]
    if thread.is_alive() and since is not None:
        latencies.append(time.perf_counter() - since)
    return latencies


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def at_once(port: int, data: dict, files: dict, window: float) -> dict:
    stop = threading.Event()
    answers: list[tuple[int, float]] = []
    kinds = [(filename, content, api_body(filename, content)) for filename, content in files.values()]

    def hostile(i: int) -> None:
        n = i
        while not stop.is_set():
            filename, content, built = kinds[n % len(kinds)]
            n += 1
            try:
                status, _, _, seconds = api_upload(
                    port, data, filename, content, timeout=window + 30, built=built
                )
            except OSError:
                return
            answers.append((status, seconds))

    clients = [threading.Thread(target=hostile, args=(i,), daemon=True) for i in range(HOSTILE_AT_ONCE)]
    for thread in clients:
        thread.start()
    time.sleep(0.2)
    latencies = run_probe(port, window, window + 30, during=True)
    stop.set()
    for thread in clients:
        thread.join(2)
    return {
        "p50": percentile(latencies, 50),
        "p95": percentile(latencies, 95),
        "max": max(latencies, default=float("nan")),
        "probes": len(latencies),
        "answered": len(answers),
        "statuses": {s: sum(1 for t, _ in answers if t == s) for s in sorted({t for t, _ in answers})},
        "stuck": sum(thread.is_alive() for thread in clients),
    }


def warm_up(port: int, data: dict, workers: int) -> None:
    """Every worker serves a small refused upload first, as a worker that has served any upload has: its
    first one imports what uploads use (the cache's Redis client among them) and would count that."""
    bad = json.dumps([{"image_id": 1, "caption": "x"}]).encode()
    for _ in range(3):
        threads = [
            threading.Thread(target=api_upload, args=(port, data, "r.json", bad)) for _ in range(2 * workers)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)


def quiet_probe(port: int, seconds: float) -> dict:
    latencies = run_probe(port, seconds, 30)
    return {
        "p50": percentile(latencies, 50),
        "p95": percentile(latencies, 95),
        "max": max(latencies, default=0),
    }


def measure_tree(label: str, tree: Path, args, files: dict) -> dict:
    url = args.database_url.rsplit("/", 1)[0] + f"/{args.db_name}_{label}"
    recreate_database(url)
    media = tempfile.mkdtemp(prefix=f"bench-hostile-{label}-")
    env = server_env(args, url, media, tree)
    started = time.perf_counter()
    filled = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "python"), str(Path(__file__).resolve()), "--populate"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if filled.returncode:
        sys.exit(f"populate failed in {tree}:\n{filled.stderr[-3000:]}")
    data = json.loads(filled.stdout.strip().splitlines()[-1])
    print(f"[{label}] {tree}: database filled in {time.perf_counter() - started:.0f} s", flush=True)
    port = args.port_base + (0 if label == "before" else 1)
    log_path = Path(media) / "gunicorn.log"
    proc = start_server(env, tree, port, log_path)
    memory = WorkerMemory(proc.pid)
    results: dict = {"workers": len(workers_of(proc.pid))}
    try:
        warm_up(port, data, results["workers"])
        for kind, (filename, content) in files.items():
            runs = []
            for _ in range(args.repeats):
                memory.start()
                status, _, body, seconds = api_upload(port, data, filename, content)
                time.sleep(0.2)  # the worker's last frees after the answer do not lower VmHWM
                runs.append((status, seconds, memory.extra_mb(), body[:300]))
            results[kind] = runs
            print(
                f"[{label}] {kind}: " + ", ".join(f"{s} in {t:.2f} s, +{m:.0f} MB" for s, t, m, _ in runs),
                flush=True,
            )
        jar = login_session(port, data["username"])
        runs = []
        for _ in range(args.repeats):
            memory.start()
            status, _, body, seconds = page_upload(port, data, jar, "r.json", b" " * (60 * MB))
            time.sleep(0.2)
            runs.append((status, seconds, memory.extra_mb(), body[:300]))
        results["60 MB post to the page"] = runs
        print(
            f"[{label}] 60 MB post: " + ", ".join(f"{s} in {t:.2f} s, +{m:.0f} MB" for s, t, m, _ in runs),
            flush=True,
        )
        results["quiet"] = quiet_probe(port, 3)
        results["at_once"] = at_once(port, data, files, args.window)
        print(f"[{label}] 8 at once, every file read: {results['at_once']}", flush=True)
    finally:
        stop_server(proc)
    limited(args, url, media, tree, data, files, results)
    print(f"[{label}] 8 at once, default limit: {results['at_once_limited']}", flush=True)
    drop_database(url)
    return results


def clear_refusals(redis_url: str) -> None:
    """The refused-file counts live in Redis and outlive the server: an earlier run's (same ids) go."""
    import redis

    client = redis.Redis.from_url(redis_url)
    for key in client.scan_iter("*rl:upload-refused-*"):
        client.delete(key)


def limited(args, url: str, media: str, tree: Path, data: dict, files: dict, results: dict) -> None:
    """With the default SUBMISSION_REFUSED_RATE (20/h; a tree without the limit ignores it): the
    statuses of 21 small refused files, then the 8 hostile uploads at once again."""
    env = server_env(args, url, media, tree)
    env.pop("SUBMISSION_REFUSED_RATE")
    port = args.port_base + 2
    proc = start_server(env, tree, port, Path(media) / "gunicorn-limit.log")
    try:
        clear_refusals(args.redis_url)
        bad = json.dumps([{"image_id": 1, "caption": "x"}]).encode()
        results["rate_limit"] = [api_upload(port, data, "r.json", bad)[0] for _ in range(21)]
        clear_refusals(args.redis_url)
        warm_up(port, data, results["workers"])
        clear_refusals(args.redis_url)
        results["at_once_limited"] = at_once(port, data, files, args.window)
    finally:
        stop_server(proc)
        clear_refusals(args.redis_url)


def ensure_before(path: Path, commit: str) -> Path:
    if (path / "challenges" / "files.py").exists():
        return path
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path), commit], check=True)
    return path


def row(kind: str, before: list, after: list) -> str:
    def cell(runs):
        statuses = sorted({s for s, *_ in runs})
        seconds = statistics.median(t for _, t, _, _ in runs)
        extra = max(m for _, _, m, _ in runs)
        return f"{'/'.join(map(str, statuses))} | {seconds:.2f} s | {extra:,.0f} MB"

    return f"| {kind} | {cell(before)} | {cell(after)} |"


def report(before: dict, after: dict, args) -> None:
    print()
    print(
        f"Workers per tree: before {before['workers']}, after {after['workers']} (config/gunicorn.py); "
        f"{args.images:,} images x {args.languages} languages; {args.repeats} repeats "
        "(median time, largest extra memory)"
    )
    print()
    print(
        "| file | before: status | time to refusal | extra worker memory | after: status | time | extra memory |"
    )
    print("|---|---|---|---|---|---|---|")
    for kind in [*hostile_files_names(), "60 MB post to the page"]:
        print(row(kind, before[kind], after[kind]))
    print()
    print("| login page (GET /accounts/login/) | before p50 / p95 / max | after p50 / p95 / max |")
    print("|---|---|---|")
    rows = (
        ("nothing else running", "quiet"),
        (f"{HOSTILE_AT_ONCE} hostile uploads at once, every file read (refused-file limit off)", "at_once"),
        (f"{HOSTILE_AT_ONCE} hostile uploads at once, default SUBMISSION_REFUSED_RATE", "at_once_limited"),
    )
    for name, key in rows:
        b, a = before[key], after[key]
        print(
            f"| {name} | {b['p50'] * 1000:,.0f} / {b['p95'] * 1000:,.0f} / {b['max'] * 1000:,.0f} ms "
            f"| {a['p50'] * 1000:,.0f} / {a['p95'] * 1000:,.0f} / {a['max'] * 1000:,.0f} ms |"
        )
    print()
    for name, key in rows[1:]:
        b, a = before[key], after[key]
        print(
            f"{name}, {args.window:.0f} s: uploads answered before {b['statuses']} (in flight at the end: "
            f"{b['stuck']}), after {a['statuses']} ({a['stuck']}); login probes before {b['probes']}, "
            f"after {a['probes']}"
        )
    for label, results in (("before", before), ("after", after)):
        statuses = results["rate_limit"]
        print(
            f"21 small refused files in a row, default limit, {label}: "
            f"{statuses.count(400)} x 400, {statuses.count(429)} x 429"
        )
    print()
    bomb, junk = after["60 KB bomb"], after["45 MB junk"]
    checks = [
        ("60 KB bomb refused in under 1 s", max(t for _, t, _, _ in bomb) < TARGETS["bomb_seconds"]),
        ("60 KB bomb under 50 MB extra", max(m for _, _, m, _ in bomb) < TARGETS["bomb_mb"]),
        ("45 MB junk under 150 MB extra", max(m for _, _, m, _ in junk) < TARGETS["junk_mb"]),
        (
            f"login p95 under 200 ms, {HOSTILE_AT_ONCE} hostile uploads at once, default settings",
            after["at_once_limited"]["p95"] < TARGETS["login_p95"],
        ),
        (
            f"login p95 under 200 ms, {HOSTILE_AT_ONCE} hostile uploads at once, every file read",
            after["at_once"]["p95"] < TARGETS["login_p95"],
        ),
        (
            "every hostile file refused (400/413)",
            all(
                s in (400, 413)
                for k in [*hostile_files_names(), "60 MB post to the page"]
                for s, *_ in after[k]
            ),
        ),
        (
            "the 21st refused file of an hour is a 429",
            after["rate_limit"][:20] == [400] * 20 and after["rate_limit"][20] == 429,
        ),
    ]
    for name, ok in checks:
        print(f"{'PASS' if ok else 'FAIL'}  {name}")


def hostile_files_names() -> list[str]:
    return ["60 KB bomb", "45 MB junk", "zip bomb"]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--populate", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--before", type=Path, default=Path("/tmp/before"), help="the tree measured as before"
    )
    parser.add_argument(
        "--before-commit", default=BEFORE_COMMIT, help="made a worktree at --before if missing"
    )
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/bench_hostile"),
    )
    parser.add_argument("--db-name", default="bench_hostile")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/14")
    parser.add_argument("--images", type=int, default=3600)
    parser.add_argument("--languages", type=int, default=36)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--window", type=float, default=15.0, help="seconds of hostile uploads at once")
    parser.add_argument("--port-base", type=int, default=18340)
    args = parser.parse_args()
    if args.populate:
        populate()
        return
    files = hostile_files()
    print("files: " + ", ".join(f"{k} {len(v[1]):,} bytes" for k, v in files.items()), flush=True)
    before_tree = ensure_before(args.before, args.before_commit)
    before = measure_tree("before", before_tree, args, files)
    after = measure_tree("after", ROOT, args, files)
    report(before, after, args)


if __name__ == "__main__":
    main()
