#!/usr/bin/env python
"""Load benchmark (RELIABILITY 22, issue 24): hundreds of simulated annotators against gunicorn + PostgreSQL.

Not a test: it prints figures and PASS/FAIL against the targets, for this tree ("after") and, with
``--ref PATH`` or ``--ref-commit SHA``, for another tree of the platform ("before", e.g. the commit a
change started from, unpacked with ``git archive``) in the same run, same settings, same load.

Per tree:

1. Creates a fresh database (``--db-name`` plus ``_before``/``_after``; dropped first) on the server
   of ``--database-url`` / ``DATABASE_URL``, migrates it with that tree's code and fills it with
   one open caption campaign (``--images`` images sharing one tiny PNG file, ``--controls`` rated
   control items, one per batch) and ``--annotators`` annotators, with the ORM in bulk. Each
   annotator gets a session in the database as a login would leave it (PBKDF2 for hundreds of
   logins would take minutes); ``--login-form`` of them log in through the real form as a check.
2. Starts gunicorn on 127.0.0.1 with that tree's code, its serving settings (``config/gunicorn.py``;
   a tree without one: ``-w 4 -k gthread --threads 8``, as it was served) and the base settings (DEBUG off, Redis cache), and waits for every worker to answer.
3. Phase 1, open loop: every annotator works with think time (``--think-scale``) as the pages do
   it: asks for a batch (POST, redirect, screen 1), rates every image (controls included), now and
   then reports an image (``--report-share``; its caption is then left empty, as screen 2 allows),
   opens screen 2 with the ratings it shows, saves 2-3 drafts per caption with the draft-revision
   protocol and a typing record (static/js/screen2.js, typing.js), and submits the captions as
   shown, with their revisions and typing records. Latency per request type, p50/p95/p99.
4. Phase 2, closed loop: ``--closed-clients`` annotators without think time: requests/s.
5. Optional (``--with-background``): phase 1 again beside a heavy streaming export.
6. Data checks on the database afterwards: no item above K, every item's counter equal to its
   assignments that count, no (item, annotator) pair twice, no caption twice, every item with K
   captions from K different annotators, and every caption a 200 answer acknowledged stored with
   the text sent. CPU per request: gunicorn's own CPU (master and workers, from /proc) over the
   requests served.

``--profile`` also prints, per request type, the queries and the CPU each request costs inside one
process (Django's test client, cProfile) and the functions the time goes to, per tree.

Everything is bounded (duration, request budget, timeouts) and talks to 127.0.0.1 only; the server
is stopped on exit. The load generator shares the machine's cores with the server and PostgreSQL,
so the figures are a lower bound of what the server can do alone.

    .venv/bin/python benchmarks/load_annotators.py --ref-commit 3eb505c --annotators 500 --duration 60
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode, urlparse

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = ROOT / ".venv" / "bin"
PASSWORD = "bench-password-Xq7!"
# Issue 24's targets at 500 annotators: next batch and submit p95 under 100 ms.
TARGETS = {"next_batch": 0.100, "submit": 0.100}
BACKGROUND_RATIO_TARGET = 1.25

BATCH_RE = re.compile(r"^/work/batch/(\d+)/(rate/|write/)?$")
ASSIGNMENT_RE = re.compile(r'data-assignment="(\d+)"')
SCREEN2_ITEM_RE = re.compile(r'data-assignment="(\d+)" data-revision="(\d+)"')
CSRF_INPUT_RE = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


# --- measurement -----------------------------------------------------------------------------


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.errors: Counter = Counter()
        self.error_samples: list[str] = []
        self.requests = 0
        self.events: Counter = Counter()
        # assignment id -> caption text of every submit the server answered 200 (the data checks).
        self.acknowledged: dict[int, str] = {}

    def record(self, kind: str, seconds: float) -> None:
        with self.lock:
            self.latency[kind].append(seconds)

    def count_request(self) -> int:
        with self.lock:
            self.requests += 1
            return self.requests

    def error(self, kind: str, what: str) -> None:
        with self.lock:
            self.errors[f"{kind}: {what}"] += 1
            if len(self.error_samples) < 10:
                self.error_samples.append(f"{kind}: {what}")

    def event(self, name: str) -> None:
        with self.lock:
            self.events[name] += 1

    def acknowledge(self, captions: dict[int, str]) -> None:
        with self.lock:
            self.acknowledged.update(captions)


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, int(round(p / 100 * len(ordered) + 0.5)) - 1))
    return ordered[rank]


REPORT_ORDER = [
    "login",
    "next_batch",
    "next_batch_total",
    "batch_redirect",
    "screen1",
    "screen2",
    "rating",
    "open_writing",
    "draft",
    "report",
    "submit",
]


def print_table(stats: Stats) -> None:
    print(f"  {'request':<18}{'n':>7}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'max ms':>9}")
    kinds = [k for k in REPORT_ORDER if k in stats.latency] + sorted(set(stats.latency) - set(REPORT_ORDER))
    for kind in kinds:
        values = stats.latency[kind]
        print(
            f"  {kind:<18}{len(values):>7}{percentile(values, 50) * 1000:>9.1f}{percentile(values, 95) * 1000:>9.1f}"
            f"{percentile(values, 99) * 1000:>9.1f}{max(values) * 1000:>9.1f}"
        )
    errors = sum(stats.errors.values())
    print(f"  errors: {errors}" + (f"  {dict(stats.errors.most_common(6))}" if errors else ""))
    if stats.events:
        print(f"  events: {dict(stats.events)}")


def annotator_requests(stats: Stats) -> list[float]:
    """Every request an annotator waits for while working (not the login warm-up, not totals)."""
    return [v for k, vs in stats.latency.items() if k not in ("login", "next_batch_total") for v in vs]


# --- a browser-like HTTP client ----------------------------------------------------------------


class StopPhase(Exception):
    pass


class Browser:
    """One annotator's browser: a keep-alive connection and a cookie jar (stdlib only)."""

    def __init__(self, port: int, username: str):
        self.port = port
        self.username = username
        self.cookies: dict[str, str] = {}
        self.conn: http.client.HTTPConnection | None = None
        self.page_language = "en"

    def adopt_session(self, session_key: str) -> None:
        """Carry a session made in the database as a login makes it, and a CSRF cookie of the
        form Django issues (a browser that has seen any page of the site has one)."""
        self.cookies["sessionid"] = session_key
        alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
        self.cookies["csrftoken"] = "".join(secrets.choice(alphabet) for _ in range(32))

    def _connection(self) -> http.client.HTTPConnection:
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        return self.conn

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def request(self, stats: Stats, kind: str | None, method: str, path: str, body=None, headers=None):
        headers = dict(headers or {})
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        started = time.perf_counter()
        for attempt in range(2):
            conn = self._connection()
            try:
                conn.request(method, path, body=body, headers=headers)
                response = conn.getresponse()
                data = response.read()
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # The server closed an idle keep-alive connection; a browser reconnects and
                # resends, as we do (once). Anything else is an error.
                self.close()
                if attempt:
                    raise
        elapsed = time.perf_counter() - started
        stats.count_request()
        if kind:
            stats.record(kind, elapsed)
        for header in response.headers.get_all("Set-Cookie") or []:
            for name, morsel in SimpleCookie(header).items():
                if morsel.value and morsel["max-age"] != "0":
                    self.cookies[name] = morsel.value
                else:
                    self.cookies.pop(name, None)
        if response.getheader("Connection", "").lower() == "close":
            self.close()
        return response.status, response, data

    @property
    def csrf(self) -> str:
        return self.cookies.get("csrftoken", "")

    def get(self, stats, kind, path):
        return self.request(stats, kind, "GET", path)

    def post_form(self, stats, kind, path, fields):
        body = urlencode(fields)
        headers = {"Content-Type": "application/x-www-form-urlencoded", "X-CSRFToken": self.csrf}
        return self.request(stats, kind, "POST", path, body, headers)

    def post_json(self, stats, kind, path, data):
        # As static/js/common.js: the page's own language (<html lang>, the campaign's) goes along.
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "Accept-Language": self.page_language,
            "X-CSRFToken": self.csrf,
        }
        return self.request(stats, kind, "POST", path, json.dumps(data), headers)

    def login(self, stats: Stats) -> bool:
        status, _, html = self.get(stats, None, "/accounts/login/")
        match = CSRF_INPUT_RE.search(html.decode())
        if status != 200 or not match:
            stats.error("login", f"login page HTTP {status}")
            return False
        fields = {"username": self.username, "password": PASSWORD, "csrfmiddlewaretoken": match.group(1)}
        status, response, _ = self.post_form(stats, "login", "/accounts/login/", fields)
        if status != 302 or "sessionid" not in self.cookies:
            stats.error("login", f"HTTP {status}")
            return False
        return True


# --- one annotator's behaviour -------------------------------------------------------------------


class Phase:
    def __init__(
        self, *, name: str, duration: float, think_scale: float, max_requests: int, report_share: float = 0.0
    ):
        self.name = name
        self.report_share = report_share
        self.stats = Stats()
        self.deadline = time.monotonic() + duration
        self.think_scale = think_scale
        self.max_requests = max_requests
        self.started = time.monotonic()
        self.ended: float | None = None
        self.cpu = ""
        self.cpu_ms = float("nan")
        self.capacity = float("nan")
        self.rate = float("nan")

    def check(self) -> None:
        if time.monotonic() >= self.deadline or self.stats.requests >= self.max_requests:
            raise StopPhase

    def think(self, low: float = 0.5, high: float = 2.0) -> None:
        if self.think_scale > 0:
            pause = random.uniform(low, high) * self.think_scale
            time.sleep(max(0.0, min(pause, self.deadline - time.monotonic())))
        self.check()


# Think time before each action, in seconds (low, high), at --think-scale 1: the pace of a quick
# but careful annotator. Rating one image means looking at it and reading the caption; a caption
# is typed in bursts, and the page autosaves after each pause (600 ms debounce). A batch of 5
# then takes about a minute and a quarter, several times faster than the paper's annotators
# (they wrote 15 captions per batch), so this load is a conservative upper bound per person.
PACE = {
    "start": (0.0, 30.0),  # people arrive over half a minute, not all in the same second
    "rate": (2.0, 6.0),
    "open_writing": (1.0, 3.0),
    "draft": (2.0, 5.0),
    "submit": (2.0, 4.0),
    "next": (2.0, 4.0),
}


def expect(stats: Stats, kind: str, status: int, wanted: int) -> bool:
    if status != wanted:
        stats.error(kind, f"HTTP {status}")
        return False
    return True


HTML_LANG_RE = re.compile(r'<html[^>]* lang="([^"]+)"')
REPORT_REASONS = ("broken", "offensive", "private")
WORDS = ["Ein", "Hund", "läuft", "über", "den", "Strand", "am", "Abend", "neben", "dem", "Meer"]


def _epoch_ms() -> int:
    return int(time.time() * 1000)


def work_one_batch(browser: Browser, phase: Phase, campaign_id: int) -> bool:
    """Ask for a batch and finish it, as screen 1 and screen 2 do (static/js/items.js, screen2.js,
    typing.js, report.js). Returns False when the campaign has no work left."""
    stats = phase.stats
    phase.check()
    began = time.perf_counter()
    status, response, _ = browser.post_form(
        stats, "next_batch", f"/work/campaign/{campaign_id}/work/", {"csrfmiddlewaretoken": browser.csrf}
    )
    if not expect(stats, "next_batch", status, 302):
        return True
    match = BATCH_RE.match(response.getheader("Location", ""))
    if not match:
        stats.event("no work left")
        return False
    batch_id = int(match.group(1))
    screen = match.group(0)
    if not match.group(2):  # an older server redirects via the batch page
        status, response, _ = browser.get(stats, "batch_redirect", screen)
        if not expect(stats, "batch_redirect", status, 302):
            return True
        screen = response.getheader("Location", "")
    kind = "screen1" if screen.endswith("/rate/") else "screen2"
    status, _, html = browser.get(stats, kind, screen)
    if not expect(stats, kind, status, 200):
        return True
    stats.record("next_batch_total", time.perf_counter() - began)
    page = html.decode()
    lang = HTML_LANG_RE.search(page)
    browser.page_language = lang.group(1) if lang else "en"
    ids = list(dict.fromkeys(int(x) for x in ASSIGNMENT_RE.findall(page)))
    if not ids:
        stats.error(kind, "no images on the page")
        return True
    api = f"/work/api/batch/{batch_id}"
    reported: set[int] = set()

    if kind == "screen1":
        shown = {}
        for pk in ids:  # every image, the rated control among them (nothing tells it apart)
            phase.think(*PACE["rate"])
            if random.random() < phase.report_share:
                # "Report a problem with this image" (report.js); screen 2 then lets its caption stay empty.
                status, _, _ = browser.post_json(
                    stats,
                    "report",
                    f"{api}/report/",
                    {"assignment": pk, "reason": random.choice(REPORT_REASONS)},
                )
                if expect(stats, "report", status, 200):
                    reported.add(pk)
                value = "nei"
            else:
                value = random.choice(["excellent", "good", "medium", "bad", "nei"])
            status, _, _ = browser.post_json(
                stats, "rating", f"{api}/rating/", {"assignment": pk, "value": value, "seconds": 3.2}
            )
            if expect(stats, "rating", status, 200):
                shown[str(pk)] = value
        phase.think(*PACE["open_writing"])
        status, _, _ = browser.post_json(
            stats, "open_writing", f"{api}/open-writing/", {"rating_seconds": 40.0, "shown": shown}
        )
        if not expect(stats, "open_writing", status, 200):
            return True
        status, _, html = browser.get(stats, "screen2", f"/work/batch/{batch_id}/write/")
        if not expect(stats, "screen2", status, 200):
            return True

    # The draft-revision protocol as the page follows it: screen 2 names its images (control items
    # are never on it) and each draft's stored revision; every save sends the revision it grew from
    # and goes on from the one the server answers (a resumed batch starts from its stored drafts).
    # Each save carries the caption's typing record, which only grows (typing.js).
    revisions = {int(pk): int(rev) for pk, rev in SCREEN2_ITEM_RE.findall(html.decode())}
    texts: dict[int, str] = {}
    typing: dict[int, dict] = {}
    for pk, base in list(revisions.items()):
        if pk in reported and random.random() < 0.5:
            texts[pk] = ""  # a reported image may stay without a caption
            continue
        first_key = _epoch_ms()
        for step in range(1, random.randint(2, 3) + 1):
            phase.think(*PACE["draft"])
            text = " ".join(WORDS[: 3 + 3 * step]) + f" {pk}"
            typing[pk] = {
                "keystrokes": len(text) + step,
                "paste_count": 0,
                "pasted_chars": 0,
                "first_key_ms": first_key,
                "last_key_ms": max(first_key, _epoch_ms()),
            }
            status, _, body = browser.post_json(
                stats,
                "draft",
                f"{api}/draft/",
                {
                    "assignment": pk,
                    "text": text,
                    "base_revision": base,
                    "seconds": 4.0 * step,
                    "typing": typing[pk],
                },
            )
            if expect(stats, "draft", status, 200):
                base = json.loads(body)["revision"]
                revisions[pk] = base
                texts[pk] = text
    phase.think(*PACE["submit"])
    # As screen2.js submits: every image's text as shown, the revision it grew from, its typing.
    captions = [
        {
            "assignment": pk,
            "text": texts.get(pk, ""),
            "base_revision": revisions[pk],
            "seconds": 9.0,
            **({"typing": typing[pk]} if pk in typing else {}),
        }
        for pk in revisions
    ]
    status, _, _ = browser.post_json(
        stats,
        "submit",
        f"{api}/submit/",
        {"submit_key": secrets.token_hex(16), "writing_seconds": 90.0, "captions": captions},
    )
    if expect(stats, "submit", status, 200):
        stats.event("batches submitted")
        stats.acknowledge({c["assignment"]: c["text"].strip() for c in captions if c["text"].strip()})
    phase.think(*PACE["next"])
    return True


def annotator_loop(browser: Browser, phase: Phase, campaign_id: int) -> None:
    try:
        # Spread the start over one think time, as people do not all click at once.
        phase.think(*PACE["start"])
        while True:
            try:
                if not work_one_batch(browser, phase, campaign_id):
                    return
            except (OSError, http.client.HTTPException) as exc:
                # Counted; the person reloads after a moment and carries on with their batch.
                phase.stats.error("client", f"{type(exc).__name__}: {exc}"[:120])
                browser.close()
                time.sleep(0.5)
                phase.check()
    except StopPhase:
        pass
    except Exception as exc:  # noqa: BLE001 - a bug in the simulation: counted, this user stops
        phase.stats.error("client", f"{type(exc).__name__}: {exc}"[:120])


def _proc_cpu(pid: int) -> tuple[int, float] | None:
    """(parent pid, CPU seconds) of a process, from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class CpuMeter:
    """Who used the machine's CPU during a phase: this load generator, gunicorn (master and
    workers), the PostgreSQL backends of the bench database, and everything else."""

    def __init__(self, server_pid: int | None, database_url: str):
        self.server_pid = server_pid
        self.database_url = database_url

    def _db_backends(self) -> list[int]:
        import psycopg2

        try:
            conn = psycopg2.connect(self.database_url)
        except psycopg2.Error:
            return []
        try:
            with conn.cursor() as cursor:
                cursor.execute(
                    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
                return [pid for (pid,) in cursor.fetchall()]
        finally:
            conn.close()

    def snapshot(self) -> dict:
        me = os.times()
        values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        ticks = os.sysconf("SC_CLK_TCK")
        idle = values[3] + values[4]
        server = 0.0
        if self.server_pid:
            for entry in Path("/proc").iterdir():
                if entry.name.isdigit():
                    info = _proc_cpu(int(entry.name))
                    if info and (int(entry.name) == self.server_pid or info[0] == self.server_pid):
                        server += info[1]
        db = {pid: info[1] for pid in self._db_backends() if (info := _proc_cpu(pid))}
        return {
            "generator": me.user + me.system,
            "server": server,
            "db": db,
            "busy": (sum(values) - idle) / ticks,
            "total": sum(values) / ticks,
        }

    @staticmethod
    def server_ms(before: dict, after: dict, requests: int) -> float:
        """gunicorn's CPU (master and workers) per request served, in ms."""
        return 1000 * (after["server"] - before["server"]) / requests if requests else float("nan")

    @staticmethod
    def report(before: dict, after: dict, requests: int) -> str:
        total = after["total"] - before["total"]
        busy = after["busy"] - before["busy"]
        gen = after["generator"] - before["generator"]
        server = after["server"] - before["server"]
        # Backends that existed before count from their old figure; new ones from zero.
        db = sum(cpu - before["db"].get(pid, 0.0) for pid, cpu in after["db"].items())
        rest = busy - gen - server - db

        def pct(x):
            return f"{100 * x / total:.0f}%"

        per_request = ""
        if requests:
            per_request = (
                f"\n  CPU per request: gunicorn {1000 * server / requests:.1f} ms, "
                f"PostgreSQL {1000 * db / requests:.1f} ms, load generator {1000 * gen / requests:.1f} ms"
            )
        return (
            f"CPU over the phase, share of {os.cpu_count()} cores: gunicorn {pct(server)}, PostgreSQL (bench db) "
            f"{pct(db)}, load generator {pct(gen)}, other processes {pct(rest)}, idle {pct(total - busy)}"
            + per_request
        )


CPU_METER: CpuMeter | None = None


def speed_probe() -> float:
    """CPU ms of one fixed piece of pure-Python work (dicts, strings, JSON, sorting), best of 5: how
    fast this machine runs Python just now. The cores of a shared host run the same code a third
    faster or slower from hour to hour; the probe printed beside each tree's phases tells a run on a
    slow hour from a regression (compare figures only where the probes agree)."""
    best = float("inf")
    for _ in range(5):
        start = time.process_time()
        rows = [{"id": n, "text": f"caption {n} " * 3, "tags": [n % 7, n % 11]} for n in range(20_000)]
        json.loads(json.dumps(sorted(rows, key=lambda r: (r["tags"][1], -r["id"]))))
        best = min(best, time.process_time() - start)
    return 1000 * best


def run_phase(browsers: list[Browser], phase: Phase, campaign_id: int) -> Phase:
    cpu_before = CPU_METER.snapshot() if CPU_METER else None
    threads = [
        threading.Thread(target=annotator_loop, args=(b, phase, campaign_id), daemon=True) for b in browsers
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(max(1.0, phase.deadline - time.monotonic() + 35))
    phase.ended = time.monotonic()
    if CPU_METER:
        cpu_after = CPU_METER.snapshot()
        phase.cpu = CPU_METER.report(cpu_before, cpu_after, phase.stats.requests)
        phase.cpu_ms = CPU_METER.server_ms(cpu_before, cpu_after, phase.stats.requests)
    stuck = sum(t.is_alive() for t in threads)
    if stuck:
        phase.stats.error("client", f"{stuck} simulated users still waiting at the end")
    return phase


def login_all(browsers: list[Browser], concurrency: int) -> Stats:
    stats = Stats()
    queue = list(browsers)
    lock = threading.Lock()
    failed = []

    def worker():
        while True:
            with lock:
                if not queue:
                    return
                browser = queue.pop()
            try:
                if not browser.login(stats):
                    failed.append(browser)
            except Exception as exc:  # noqa: BLE001
                stats.error("login", repr(exc)[:100])
                failed.append(browser)

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    for browser in failed:
        browsers.remove(browser)
    return stats


# --- database and server -----------------------------------------------------------------------


def bench_database_url(base_url: str, db_name: str) -> str:
    parsed = urlparse(base_url)
    if parsed.scheme not in ("postgres", "postgresql", "pgsql"):
        sys.exit("The benchmark needs PostgreSQL: --database-url postgres://user@host:port/db")
    return parsed._replace(path=f"/{db_name}").geturl()


def recreate_database(url: str) -> None:
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
        port=parsed.port or 5432,
    )
    conn.autocommit = True
    with conn.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        cursor.execute(f'CREATE DATABASE "{name}"')
    conn.close()


def server_env(args, url: str, media_root: str, tree: Path = ROOT) -> dict[str, str]:
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
            "DJANGO_LOG_LEVEL": "ERROR",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(tree), os.environ.get("PYTHONPATH", "")])),
        }
    )
    return env


def populate(args) -> dict:
    """Fill the fresh database in bulk (in this process); return ids the load needs."""
    import hashlib

    import django
    from django.contrib.auth.hashers import make_password

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection, transaction

    from annotation import models as m
    from annotation.services.campaigns import campaign_open

    call_command("migrate", verbosity=0)
    media = Path(os.environ["DJANGO_MEDIA_ROOT"])
    (media / "bench").mkdir(parents=True, exist_ok=True)
    (media / "bench" / "tiny.png").write_bytes(_tiny_png())

    with transaction.atomic():
        german = m.Language.objects.create(code="de", name="German")
        english = m.Language.objects.create(code="en", name="English")
        system = m.CaptioningSystem.objects.create(name="bench-prompt-system")

        def images(prefix: str, n: int) -> list:
            objs = [
                m.Image(
                    key=f"{prefix}{i:06d}",
                    file="bench/tiny.png",
                    content_hash=hashlib.sha256(f"{prefix}{i}".encode()).hexdigest(),
                    format="PNG",
                    width=8,
                    height=8,
                )
                for i in range(n)
            ]
            return m.Image.objects.bulk_create(objs, batch_size=2000)

        live_images = images("bench", args.images)
        m.SystemCaption.objects.bulk_create(
            [
                m.SystemCaption(
                    system=system, image=img, language=english, text=f"a dog on a beach, picture {i}"
                )
                for i, img in enumerate(live_images)
            ],
            batch_size=2000,
        )
        campaign = m.Campaign.objects.create(
            name="bench campaign",
            language=german,
            prompt_system=system,
            batch_size=args.batch_size,
            replication=args.replication,
            lease_minutes=60,
        )
        password = make_password(PASSWORD)  # one PBKDF2 hash shared by every bench user
        users = get_user_model().objects.bulk_create(
            [
                get_user_model()(username=f"bench{i:04d}", password=password)
                for i in range(args.annotators + 1)
            ],
            batch_size=2000,
        )
        annotators = m.Annotator.objects.bulk_create(
            [m.Annotator(user=u, reads_english=True, pseudonym=f"A-{secrets.token_hex(6)}") for u in users],
            batch_size=2000,
        )
        m.AnnotatorSkill.objects.bulk_create(
            [m.AnnotatorSkill(annotator=a, language=german, level=m.SkillLevel.NATIVE) for a in annotators],
            batch_size=2000,
        )
        history = 0
        if args.with_background and args.history_captions:
            history = _history(m, german, system, annotators, images, args.history_captions)
    campaign_open(campaign_id=campaign.pk)
    if args.controls:
        # Rated controls as crowd campaigns carry them: one per batch, on screen 1 only.
        from annotation.services.controls import campaign_controls_add

        campaign_controls_add(campaign_id=campaign.pk, mismatched=args.controls, controls_per_batch=1, seed=7)
    sessions = _sessions(users[:-1])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    connection.close()
    return {
        "campaign_id": campaign.pk,
        "usernames": [u.username for u in users[:-1]],
        "sessions": sessions,
        "profile_username": users[-1].username,
        "history_captions": history,
        "history_campaign_id": (
            m.Campaign.objects.filter(name="bench history").values_list("pk", flat=True).first()
            if history
            else None
        ),
    }


def _sessions(users) -> list[str]:
    """A database session per user, as a login through the form leaves it (the hash of a bench
    password costs PBKDF2's half second per login: minutes for hundreds of annotators)."""
    from datetime import timedelta

    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore
    from django.contrib.sessions.models import Session
    from django.utils import timezone

    store = SessionStore()
    expire = timezone.now() + timedelta(seconds=settings.SESSION_COOKIE_AGE)
    rows = [
        Session(
            session_key=secrets.token_hex(16),
            session_data=store.encode(
                {
                    SESSION_KEY: str(u.pk),
                    BACKEND_SESSION_KEY: settings.AUTHENTICATION_BACKENDS[0],
                    HASH_SESSION_KEY: u.get_session_auth_hash(),
                }
            ),
            expire_date=expire,
        )
        for u in users
    ]
    Session.objects.bulk_create(rows, batch_size=2000)
    return [row.session_key for row in rows]


def _history(m, language, system, annotators, images, n_captions: int) -> int:
    """A closed campaign with ``n_captions`` submitted captions, so the export has volume."""
    from django.utils import timezone

    n_images = n_captions // 2
    imgs = images("hist", n_images)
    campaign = m.Campaign.objects.create(
        name="bench history", language=language, prompt_system=system, state=m.CampaignState.CLOSED
    )
    items = m.Item.objects.bulk_create(
        [m.Item(campaign=campaign, image=img) for img in imgs], batch_size=5000
    )
    now = timezone.now()
    batches = m.Batch.objects.bulk_create(
        [
            m.Batch(
                campaign=campaign,
                annotator=a,
                stage=m.BatchStage.SUBMITTED,
                lease_expires_at=now,
                submitted_at=now,
            )
            for a in annotators
        ]
    )
    positions = Counter()
    assignments = []
    for i, item in enumerate(items):
        for j in (i % len(annotators), (i + 1) % len(annotators)):
            batch = batches[j]
            assignments.append(
                m.Assignment(
                    batch=batch,
                    item=item,
                    annotator_id=batch.annotator_id,
                    position=positions[j],
                    state=m.AssignmentState.SUBMITTED,
                )
            )
            positions[j] += 1
    assignments = m.Assignment.objects.bulk_create(assignments, batch_size=5000)
    image_of = {item.pk: item.image_id for item in items}
    m.WrittenCaption.objects.bulk_create(
        [
            m.WrittenCaption(
                assignment=a,
                image_id=image_of[a.item_id],
                language=language,
                annotator_id=a.annotator_id,
                campaign=campaign,
                text=f"Ein historisches Bild Nummer {a.item_id}, beschrieben von Person {a.annotator_id}.",
                seconds=12.5,
            )
            for a in assignments
        ],
        batch_size=5000,
    )
    m.Item.objects.filter(campaign=campaign).update(active_count=2)
    return len(assignments)


def _tiny_png() -> bytes:
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (120, 160, 200)).save(buf, format="PNG")
    return buf.getvalue()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# The serving line of a tree without config/gunicorn.py (before issue 24's serving settings).
LEGACY_SERVER_ARGS = ["-w", "4", "-k", "gthread", "--threads", "8", "--keep-alive", "10"]


def server_args(tree: Path, workers: int, threads: int) -> list[str]:
    """gunicorn's options for ``tree``: its own config/gunicorn.py (the documented deployment line)
    where it has one, else the line it was served with before; ``--workers``/``--threads`` override."""
    argv = (
        ["-c", "config/gunicorn.py"]
        if (tree / "config" / "gunicorn.py").exists()
        else list(LEGACY_SERVER_ARGS)
    )
    if workers:
        argv += ["-w", str(workers)]
    if threads:
        argv += ["-k", "gthread", "--threads", str(threads)]
    return argv


def describe_server(tree: Path, workers: int, threads: int, env: dict) -> tuple[str, int]:
    """The serving line as gunicorn will run it (workers, threads), read from its own config."""
    probe = subprocess.run(
        [
            str(VENV_BIN / "python"),
            "-c",
            "import sys; from gunicorn.app.wsgiapp import WSGIApplication as A; sys.argv = ['gunicorn', *sys.argv[1:]];"
            " a = A(); c = a.cfg; print(c.workers, c.worker_class_str, c.threads, c.keepalive)",
            *server_args(tree, workers, threads),
            "config.wsgi",
        ],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    try:
        n, kind, threads_per, keepalive = probe.stdout.split()
    except ValueError:
        return "gunicorn (its settings could not be read)", 4
    if kind == "sync":  # one request per process at a time; each connection closed after its answer
        return f"-w {n} -k sync", int(n)
    return f"-w {n} -k {kind} --threads {threads_per} --keep-alive {keepalive}", int(n)


def start_server(
    env: dict,
    port: int,
    log_path: Path,
    wsgi: str = "config.wsgi",
    tree: Path = ROOT,
    workers: int = 0,
    threads: int = 0,
    expected_workers: int = 4,
) -> subprocess.Popen:
    log = open(log_path, "wb")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen(
        [
            str(VENV_BIN / "gunicorn"),
            *server_args(tree, workers, threads),
            wsgi,
            "-b",
            f"127.0.0.1:{port}",
            "--graceful-timeout",
            "5",
        ],
        cwd=tree,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    # Generous: on a busy machine four workers importing the platform take a while.
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"gunicorn exited with {proc.returncode}; see {log_path}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                conn.close()
                _settle(proc.pid, workers=expected_workers)
                return proc
        except OSError:
            time.sleep(0.2)
    stop_server(proc)
    sys.exit(f"gunicorn did not answer within 120 s; see {log_path}")


def _settle(master: int, workers: int, limit: float = 30.0) -> None:
    """Wait until every worker has booted (the master's children exist and have stopped using CPU
    for a moment): a phase must not measure a worker's start."""
    deadline = time.monotonic() + limit
    last = None
    while time.monotonic() < deadline:
        children = [
            info[1]
            for entry in Path("/proc").iterdir()
            if entry.name.isdigit() and (info := _proc_cpu(int(entry.name))) and info[0] == master
        ]
        cpu = sum(children)
        if len(children) >= workers and last is not None and cpu - last < 0.02:
            return
        last = cpu
        time.sleep(0.5)


def stop_server(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


# --- the heavy read that runs beside the annotators ----------------------------------------------

EXPORT_LOOP = r"""
end=$((SECONDS + $2)); runs=0
while [ $SECONDS -lt $end ]; do
  chrt --idle 0 nice -n 19 "$3" manage.py export captions --campaign "$1" --format xm3600 --output - -v 0 > /dev/null || exit 1
  runs=$((runs + 1))
done
echo "$runs"
"""


def start_background(env: dict, campaign_id: int, seconds: float) -> subprocess.Popen:
    """The platform's own streaming export (XM3600 format) of a large campaign, back to back, in
    another process at idle CPU priority (SCHED_IDLE): as batch jobs should run beside a web server."""
    return subprocess.Popen(
        ["bash", "-c", EXPORT_LOOP, "export-loop", str(campaign_id), str(int(seconds)), sys.executable],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


# --- profile inside one process ---------------------------------------------------------------

# Where a request's CPU goes: each function's own time (callees not included, so the parts add up
# to 100%), by the code it belongs to, first match wins.
PROFILE_PARTS = [
    ("database driver (psycopg2)", ("psycopg2",)),
    ("ORM (queries built, rows to objects)", ("django/db/",)),
    ("templates", ("django/template/", "django/templatetags/", "django/forms/")),
    ("sessions, auth, signing", ("django/contrib/sessions/", "django/contrib/auth/", "django/core/signing")),
    ("translation", ("django/utils/translation/", "gettext")),
    ("DRF (views, serializers, JSON)", ("rest_framework/",)),
    ("Django request/response, middleware, URLs", ("django/",)),
    ("platform code (annotation, core)", ("/annotation/", "/core/", "/config/")),
]


def profile_requests(campaign_id: int, username: str, batches: int) -> None:
    """Queries and CPU per request type, in process, through Django's test client on the bench
    data, the way the pages make them (``batches`` batches, after one that warms the process up);
    then, from one more batch under cProfile (CPU clock), where the CPU goes."""
    import cProfile
    import pstats

    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(HTTP_ACCEPT_LANGUAGE="de")
    client.force_login(get_user_model().objects.get(username=username))
    profiler = cProfile.Profile(time.process_time)
    profiling = False
    rows: dict[str, list] = defaultdict(list)
    queries_of: dict[str, list] = {}

    def run(label, fn):
        with CaptureQueriesContext(connection) as ctx:
            cpu = time.process_time()
            if profiling:
                profiler.enable()
            response = fn()
            if profiling:
                profiler.disable()
            cpu = time.process_time() - cpu
        if response.status_code >= 400:
            print(f"  {label}: HTTP {response.status_code} {response.content[:200]!r}")
        if not profiling:
            rows[label].append((cpu, len(ctx.captured_queries)))
        queries_of.setdefault(label, ctx.captured_queries)
        return response

    def post(label, url, data):
        return run(label, lambda: client.post(url, data, "application/json", HTTP_ACCEPT="application/json"))

    client.get("/work/")
    for number in range(batches + 2):
        if number == 1:
            rows.clear()  # the first batch of a process pays for imports and caches
        profiling = number == batches + 1
        r = run("next_batch", lambda: client.post(f"/work/campaign/{campaign_id}/work/"))
        batch_id = int(BATCH_RE.match(r["Location"]).group(1))
        page = run("screen1", lambda b=batch_id: client.get(f"/work/batch/{b}/rate/")).content.decode()
        ids = list(dict.fromkeys(int(x) for x in ASSIGNMENT_RE.findall(page)))
        api = f"/work/api/batch/{batch_id}"
        for pk in ids:
            post("rating", f"{api}/rating/", {"assignment": pk, "value": "good", "seconds": 3.0})
        post("report", f"{api}/report/", {"assignment": ids[0], "reason": "broken"})
        post(
            "open_writing",
            f"{api}/open-writing/",
            {"rating_seconds": 30.0, "shown": {str(i): "good" for i in ids}},
        )
        page = run("screen2", lambda b=batch_id: client.get(f"/work/batch/{b}/write/")).content.decode()
        revisions = {int(pk): int(rev) for pk, rev in SCREEN2_ITEM_RE.findall(page)}
        texts = {}
        for pk in revisions:
            first = _epoch_ms()
            for step in (1, 2):
                text = " ".join(WORDS[: 3 + 3 * step]) + f" {pk}"
                typing = {"keystrokes": 40 * step, "paste_count": 0, "pasted_chars": 0}
                typing.update(first_key_ms=first, last_key_ms=first + 4000 * step)
                body = post(
                    "draft",
                    f"{api}/draft/",
                    {"assignment": pk, "text": text, "base_revision": revisions[pk], "typing": typing},
                ).json()
                revisions[pk], texts[pk] = body["revision"], text
        captions = [{"assignment": pk, "text": texts[pk], "base_revision": revisions[pk]} for pk in revisions]
        post("submit", f"{api}/submit/", {"submit_key": secrets.token_hex(8), "captions": captions})
    print(f"\n  In one process (Django test client, {batches} batches; CPU of this process per request):")
    print(f"  {'request':<14}{'n':>5}{'queries':>9}{'CPU ms':>9}")
    for label, values in rows.items():
        print(
            f"  {label:<14}{len(values):>5}{max(q for _, q in values):>9}"
            f"{1000 * sum(c for c, _ in values) / len(values):>9.1f}"
        )
        if os.environ.get("BENCH_SHOW_SQL"):
            for q in queries_of[label]:
                print(f"      {q['sql'][:160]}")
    stats = pstats.Stats(profiler)
    total = stats.total_tt
    shares: Counter = Counter()
    for (filename, _line, func), (_cc, _nc, tt, _ct, _callers) in stats.stats.items():
        where = f"{filename} {func}"
        part = next(
            (name for name, marks in PROFILE_PARTS if any(m in where for m in marks)),
            "other (built-ins such as getattr and len, the standard library)",
        )
        shares[part] += tt
    print(
        f"  where the CPU of one batch's requests goes (cProfile, own time per function, {1000 * total:.0f} ms):"
    )
    for name, _ in [*PROFILE_PARTS, ("other (built-ins such as getattr and len, the standard library)", ())]:
        if total:
            print(f"    {name:<66}{100 * shares[name] / total:>5.0f}%")
    connection.close()


# --- data checks --------------------------------------------------------------------------------


def data_checks(url: str, campaign_id: int, acknowledged: dict[int, str]) -> tuple[bool, list[str]]:
    """What the platform promises about the work, read from the database after the load."""
    import psycopg2

    conn = psycopg2.connect(url)
    counting = ("live", "submitted", "late")
    try:
        with conn.cursor() as cursor:
            cursor.execute("SELECT replication FROM annotation_campaign WHERE id = %s", [campaign_id])
            k = cursor.fetchone()[0]
            cursor.execute(
                """SELECT i.id, i.active_count,
                          count(a.id) FILTER (WHERE a.state IN %s),
                          count(a.id) FILTER (WHERE a.state IN ('submitted', 'late')),
                          count(a.id) - count(DISTINCT a.annotator_id)
                   FROM annotation_item i LEFT JOIN annotation_assignment a ON a.item_id = i.id
                   WHERE i.campaign_id = %s AND NOT i.is_control GROUP BY i.id""",
                [counting, campaign_id],
            )
            items = cursor.fetchall()
            cursor.execute(
                """SELECT a.item_id, count(*), count(DISTINCT w.annotator_id), count(DISTINCT w.assignment_id)
                   FROM annotation_writtencaption w JOIN annotation_assignment a ON a.id = w.assignment_id
                   WHERE w.campaign_id = %s GROUP BY a.item_id""",
                [campaign_id],
            )
            captions = {item: (n, people, assignments) for item, n, people, assignments in cursor.fetchall()}
            cursor.execute(
                """SELECT count(*) FROM annotation_writtencaption w JOIN annotation_assignment a
                   ON a.id = w.assignment_id WHERE w.campaign_id = %s AND a.state NOT IN ('submitted', 'late')""",
                [campaign_id],
            )
            unsubmitted = cursor.fetchone()[0]
            cursor.execute(
                "SELECT assignment_id, text FROM annotation_writtencaption WHERE assignment_id = ANY(%s)",
                [list(acknowledged)],
            )
            stored = dict(cursor.fetchall())
    finally:
        conn.close()
    over_k = sum(1 for _, _, live_or_done, _, _ in items if live_or_done > k)
    counters = sum(1 for _, counter, live_or_done, _, _ in items if counter != live_or_done)
    pairs = sum(dup for *_, dup in items)
    done = [item for item, _, _, submitted, _ in items if submitted == k]
    caption_dups = sum(1 for n, _, assignments in captions.values() if n != assignments)
    not_k_people = sum(1 for n, people, _ in captions.values() if n != people or n > k)
    lost = sum(1 for pk in acknowledged if pk not in stored)
    changed = sum(1 for pk, text in acknowledged.items() if pk in stored and stored[pk] != text)
    checks = [
        (f"items above K={k} (live or done)", over_k),
        ("items whose counter differs from their assignments that count", counters),
        ("(item, annotator) pairs assigned twice", pairs),
        ("captions stored twice for one assignment", caption_dups),
        ("items whose captions are not from distinct annotators, or above K", not_k_people),
        ("captions of assignments not submitted", unsubmitted),
        (f"acknowledged captions missing (of {len(acknowledged)})", lost),
        ("acknowledged captions stored with another text", changed),
    ]
    lines = [f"  {name}: {n}  {'PASS' if n == 0 else 'FAIL'}" for name, n in checks]
    lines.append(
        f"  items with exactly K={k} submitted results: {len(done)} of {len(items)} (the rest in progress)"
    )
    return all(n == 0 for _, n in checks), lines


# --- one tree, start to end ---------------------------------------------------------------------


def run_internal(args) -> int:
    """``--internal populate|profile``: the steps that import the platform's code run in a child
    process whose path starts with the tree under test, so the reference tree runs its own code."""
    sys.path.insert(0, str(args.tree))
    if args.internal == "populate":
        print("SETUP " + json.dumps(populate(args)))
        return 0
    import django

    django.setup()
    profile_requests(args.campaign_id, args.profile_username, args.profile_batches)
    return 0


def _child(args, tree: Path, env: dict, *extra: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, str(Path(__file__).resolve()), "--tree", str(tree), *extra]
    for name in ("images", "annotators", "batch_size", "replication", "controls", "history_captions"):
        argv += [f"--{name.replace('_', '-')}", str(getattr(args, name))]
    if args.with_background:
        argv.append("--with-background")
    return subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True, timeout=900)


def run_tree(args, label: str, tree: Path, scales: list[float]) -> dict:
    """Everything for one tree: database, server, phases, data checks. Returns the figures."""
    url = bench_database_url(args.database_url, f"{args.db_name}_{label}")
    workdir = Path(tempfile.mkdtemp(prefix=f"captioneval-bench-{label}-"))
    env = server_env(args, url, str(workdir / "media"), tree)
    env["DJANGO_CACHE_DIR"] = str(workdir / "cache")
    print(f"\n=== {label}: {tree} ===")
    print(f"Database {urlparse(url).path.lstrip('/')}: recreating, migrating, filling ...")
    t0 = time.monotonic()
    recreate_database(url)
    done = _child(args, tree, env, "--internal", "populate")
    setup_line = [line for line in done.stdout.splitlines() if line.startswith("SETUP ")]
    if done.returncode or not setup_line:
        sys.exit(f"populating failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    setup = json.loads(setup_line[-1][6:])
    print(
        f"  {args.images} images + {args.controls} rated controls, {args.annotators} annotators, N={args.batch_size}, "
        f"K={args.replication} in {time.monotonic() - t0:.1f} s"
    )
    if args.profile:
        done = _child(
            args,
            tree,
            env,
            "--internal",
            "profile",
            "--campaign-id",
            str(setup["campaign_id"]),
            "--profile-username",
            setup["profile_username"],
            "--profile-batches",
            str(args.profile_batches),
        )
        print(done.stdout.rstrip() or done.stderr[-3000:])

    port = args.port or free_port()
    serving, n_workers = describe_server(tree, args.workers, args.threads, env)
    proc = start_server(
        env, port, workdir / "gunicorn.log", args.wsgi, tree, args.workers, args.threads, n_workers
    )
    global CPU_METER
    CPU_METER = CpuMeter(proc.pid, url)
    result = {"label": label, "opened": {}, "closed": None, "background": None}
    try:
        print(f"gunicorn {args.wsgi} {serving} on 127.0.0.1:{port} (DEBUG off, Redis cache)")
        browsers = [Browser(port, name) for name in setup["usernames"]]
        for browser, key in zip(browsers[args.login_form :], setup["sessions"][args.login_form :]):
            browser.adopt_session(key)
        login_stats = login_all(browsers[: args.login_form], args.login_concurrency)
        print(
            f"Warm-up: {len(browsers)} annotators with a session, {args.login_form} of them logged in through "
            f"the login form (errors: {sum(login_stats.errors.values())})"
        )
        result["login_errors"] = sum(login_stats.errors.values())
        campaign_id = setup["campaign_id"]
        result["probe"] = [speed_probe()]
        print(f"Speed probe (fixed pure-Python work, CPU ms, lower is faster): {result['probe'][0]:.1f}")
        for scale in scales:
            print(
                f"\nPhase 1 - open loop: {len(browsers)} annotators, think time x{scale:g} "
                f"(rate {PACE['rate'][0] * scale:g}-{PACE['rate'][1] * scale:g} s per image), {args.duration:.0f} s"
            )
            phase = run_phase(
                browsers,
                Phase(
                    name="open",
                    duration=args.duration,
                    think_scale=scale,
                    max_requests=args.max_requests,
                    report_share=args.report_share,
                ),
                campaign_id,
            )
            secs = phase.ended - phase.started
            print(
                f"  {phase.stats.requests} requests in {secs:.1f} s = {phase.stats.requests / secs:.0f} req/s served"
            )
            print_table(phase.stats)
            print(f"  {phase.cpu}")
            result["opened"][scale] = phase
        print(
            f"\nPhase 2 - closed loop: {args.closed_clients} annotators, no think time, {args.closed_duration:.0f} s"
        )
        closed = run_phase(
            browsers[len(browsers) - args.closed_clients :],
            Phase(
                name="closed",
                duration=args.closed_duration,
                think_scale=0,
                max_requests=args.max_requests,
                report_share=args.report_share,
            ),
            campaign_id,
        )
        secs = closed.ended - closed.started
        closed.capacity = closed.stats.requests / secs
        print(
            f"  capacity: {closed.stats.requests} requests in {secs:.1f} s = {closed.capacity:.0f} requests/s"
        )
        print_table(closed.stats)
        print(f"  {closed.cpu}")
        result["closed"] = closed
        result["probe"].append(speed_probe())
        print(f"Speed probe after the phases: {result['probe'][-1]:.1f} ms")
        if args.with_background:
            result["background"] = background_phase(args, env, setup, browsers, scales, campaign_id)
        for browser in browsers:
            browser.close()
    finally:
        stop_server(proc)
    acknowledged = {}
    for phase in [*result["opened"].values(), result["closed"], result["background"]]:
        if phase is not None:
            acknowledged.update(phase.stats.acknowledged)
    ok, lines = data_checks(url, setup["campaign_id"], acknowledged)
    print("\nData checks after the run:")
    print("\n".join(lines))
    result["data_ok"] = ok
    shutil.rmtree(workdir, ignore_errors=True)
    return result


def background_phase(args, env, setup, browsers, scales, campaign_id):
    print(
        "\nPhase 3 - open loop again, beside a heavy read: `manage.py export captions` (XM3600 format,\n"
        f"  {setup['history_captions']} captions) back to back in another process at idle CPU priority."
    )
    background = start_background(env, setup["history_campaign_id"], args.duration + 5)
    try:
        loaded = run_phase(
            browsers,
            Phase(
                name="background",
                duration=args.duration,
                think_scale=scales[-1],
                max_requests=args.max_requests,
                report_share=args.report_share,
            ),
            campaign_id,
        )
    finally:
        try:
            out, _ = background.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            background.kill()
            out, _ = background.communicate()
    runs = out.decode().split()
    if runs and runs[-1].isdigit():
        print(f"  the export of {setup['history_captions']} captions ran {runs[-1]} times during the phase")
    else:
        print(f"  export loop output: {out.decode()[:200]}")
    print_table(loaded.stats)
    print(f"  {loaded.cpu}")
    return loaded


def verdict(args, result: dict, scales: list[float]) -> bool:
    """PASS/FAIL of one tree against the targets."""
    ok = True
    for scale, phase in result["opened"].items():
        print(f"  open loop, {args.annotators} annotators, think time x{scale:g}:")
        for kind, target in TARGETS.items():
            p95 = percentile(phase.stats.latency.get(kind, []), 95)
            passed = p95 <= target
            ok &= passed
            print(
                f"    {kind} p95 {p95 * 1000:.0f} ms <= {target * 1000:.0f} ms: {'PASS' if passed else 'FAIL'}"
            )
        errors = sum(phase.stats.errors.values())
        print(f"    errors {errors} == 0: {'PASS' if errors == 0 else 'FAIL'}")
        ok &= errors == 0
    closed = result["closed"]
    errors = sum(closed.stats.errors.values())
    print(
        f"  closed loop: {closed.capacity:.0f} requests/s with {args.closed_clients} clients, errors {errors}"
    )
    ok &= errors == 0 and result["data_ok"] and not result["login_errors"]
    print(f"  data checks: {'PASS' if result['data_ok'] else 'FAIL'}")
    loaded = result["background"]
    if loaded is not None:
        base = result["opened"][scales[-1]]
        before = percentile(annotator_requests(base.stats), 95)
        after = percentile(annotator_requests(loaded.stats), 95)
        ratio = after / before
        # A campaign that ran out of work changes the mix of requests (next batches answered "no work
        # left" instead of screens and submits): the two phases are then not the same load.
        ran_out = loaded.stats.events["no work left"] + base.stats.events["no work left"]
        passed = ratio <= BACKGROUND_RATIO_TARGET and not ran_out
        ok &= passed and not loaded.stats.errors
        print(
            f"  annotator p95 beside the export {after * 1000:.0f} ms vs {before * 1000:.0f} ms alone: "
            f"ratio {ratio:.2f} <= {BACKGROUND_RATIO_TARGET}: {'PASS' if passed else 'FAIL'}"
        )
        if ran_out:
            print(
                f"    not comparable: the campaign ran out of work ({ran_out} next batches found none); "
                "run again with more --images"
            )
    return ok


def compare(args, before: dict, after: dict, scales: list[float]) -> None:
    """The figures of both trees side by side, with the ratio after / before."""

    def row(name, b, a, unit, fmt="{:.1f}"):
        ratio = f"{a / b:.2f}" if b and b == b and a == a else "-"
        print(f"  {name:<44}{fmt.format(b):>10}{fmt.format(a):>10}  {unit:<6}{ratio:>7}")

    print(f"\n=== before ({before['tree']}) and after ({after['tree']}), same run, same load ===")
    print(f"  {'':<44}{'before':>10}{'after':>10}  {'':<6}{'ratio':>7}")
    for n, when in enumerate(("before the phases", "after the phases")):
        row(f"speed probe {when} (lower is faster)", before["probe"][n], after["probe"][n], "ms")
    bc, ac = before["closed"], after["closed"]
    row(
        f"closed loop ({args.closed_clients} clients): requests/s",
        bc.capacity,
        ac.capacity,
        "req/s",
        "{:.0f}",
    )
    row("closed loop: gunicorn CPU per request", bc.cpu_ms, ac.cpu_ms, "ms")
    for kind in ("next_batch", "rating", "draft", "submit"):
        row(
            f"closed loop: {kind} p50",
            1000 * percentile(bc.stats.latency.get(kind, []), 50),
            1000 * percentile(ac.stats.latency.get(kind, []), 50),
            "ms",
        )
    for scale in scales:
        bo, ao = before["opened"][scale], after["opened"][scale]
        row(
            f"open loop ({args.annotators} annotators x{scale:g}): requests/s",
            bo.rate,
            ao.rate,
            "req/s",
            "{:.0f}",
        )
        row("open loop: gunicorn CPU per request", bo.cpu_ms, ao.cpu_ms, "ms")
        for kind in ("next_batch", "draft", "submit"):
            row(
                f"open loop: {kind} p95",
                1000 * percentile(bo.stats.latency.get(kind, []), 95),
                1000 * percentile(ao.stats.latency.get(kind, []), 95),
                "ms",
            )
        row("open loop: errors", sum(bo.stats.errors.values()), sum(ao.stats.errors.values()), "", "{:.0f}")


# --- main ---------------------------------------------------------------------------------------


def reference_tree(args, workdir: Path) -> Path | None:
    """The tree to compare with: ``--ref PATH`` as it is, or ``--ref-commit`` unpacked by ``git archive``."""
    if args.ref:
        return Path(args.ref).resolve()
    if not args.ref_commit:
        return None
    target = workdir / f"ref-{args.ref_commit[:12]}"
    target.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", args.ref_commit], capture_output=True, check=False
    )
    if archive.returncode:
        sys.exit(f"git archive {args.ref_commit}: {archive.stderr.decode()[:300]}")
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
        help="PostgreSQL server to use (its database name is ignored; see --db-name)",
    )
    parser.add_argument(
        "--db-name", default="captioneval_bench", help="databases to create (+ _before/_after; dropped first)"
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/15")
    parser.add_argument("--port", type=int, default=0, help="gunicorn's port (default: a free one)")
    parser.add_argument("--images", type=int, default=4000)
    parser.add_argument(
        "--controls", type=int, default=200, help="rated control items (one per batch; 0: none)"
    )
    parser.add_argument("--annotators", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=5, help="N images per batch")
    parser.add_argument("--replication", type=int, default=2, help="K")
    parser.add_argument("--duration", type=float, default=150.0, help="seconds of each open-loop phase")
    parser.add_argument(
        "--think-scale",
        default="1",
        help="multiplies the think times of PACE (1 = a quick careful annotator); a comma list (e.g. 0.5,1) repeats phase 1 per value",
    )
    parser.add_argument(
        "--report-share", type=float, default=0.03, help="share of images reported on screen 1"
    )
    parser.add_argument("--max-requests", type=int, default=60000, help="request budget per phase")
    parser.add_argument("--closed-clients", type=int, default=32)
    parser.add_argument("--closed-duration", type=float, default=20.0)
    parser.add_argument("--login-form", type=int, default=4, help="annotators who log in through the form")
    parser.add_argument("--login-concurrency", type=int, default=4)
    parser.add_argument("--with-background", action="store_true", help="also measure beside a heavy export")
    parser.add_argument("--history-captions", type=int, default=40000, help="rows for the export to stream")
    parser.add_argument("--profile", action="store_true", help="queries, CPU and profile per request type")
    parser.add_argument("--profile-batches", type=int, default=3)
    parser.add_argument(
        "--wsgi", default="config.wsgi", help="WSGI module to serve (A/B a change; PYTHONPATH is passed on)"
    )
    parser.add_argument(
        "--workers", type=int, default=0, help="gunicorn processes (default: the tree's config/gunicorn.py)"
    )
    parser.add_argument(
        "--threads", type=int, default=0, help="threads per gunicorn process (default: as --workers)"
    )
    parser.add_argument("--ref", help="another tree of the platform to measure first, as 'before'")
    parser.add_argument(
        "--ref-commit", help="a commit to measure first, as 'before' (unpacked by git archive)"
    )
    parser.add_argument("--tree", type=Path, default=ROOT, help=argparse.SUPPRESS)
    parser.add_argument("--internal", choices=["populate", "profile"], help=argparse.SUPPRESS)
    parser.add_argument("--campaign-id", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--profile-username", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.internal:
        return run_internal(args)
    scales = [float(x) for x in str(args.think_scale).split(",") if x.strip()]
    if args.closed_clients > args.annotators:
        sys.exit("--closed-clients cannot exceed --annotators")

    print(f"CPU cores: {os.cpu_count()} (server, PostgreSQL and this load generator share them)")
    workdir = Path(tempfile.mkdtemp(prefix="captioneval-bench-"))
    try:
        trees = []
        ref = reference_tree(args, workdir)
        if ref is not None:
            trees.append(("before", ref))
        trees.append(("after", ROOT))
        results = []
        for label, tree in trees:
            result = run_tree(args, label, tree, scales)
            result["tree"] = str(args.ref_commit or tree) if label == "before" else "this tree"
            for phase in [*result["opened"].values(), result["closed"]]:
                phase.rate = phase.stats.requests / (phase.ended - phase.started)
            results.append(result)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    ok = True
    for result in results:
        print(f"\nTargets, {result['label']} ({result['tree']}):")
        passed = verdict(args, result, scales)
        if result["label"] == "after":
            ok = passed
    if len(results) == 2:
        compare(args, results[0], results[1], scales)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
