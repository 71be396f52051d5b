#!/usr/bin/env python
"""Load benchmark (RELIABILITY 22): hundreds of simulated annotators against gunicorn + PostgreSQL.

Not a test: it prints figures and PASS/FAIL against the targets.

1. Creates a fresh database (``--db-name``, default ``captioneval_bench``; dropped first) on
   the server of ``--database-url`` / ``DATABASE_URL``, migrates it and fills it with one open
   caption campaign (``--images`` images sharing one tiny PNG file) and ``--annotators``
   annotators, with the ORM in bulk.
2. Starts ``gunicorn config.wsgi -w 4 -k gthread --threads 8`` on 127.0.0.1 with the base
   settings (DEBUG off, Redis cache) as a subprocess.
3. Logs every annotator in through the real login form (warm-up, PBKDF2: not in the figures).
4. Phase 1, open loop: every annotator works with think time (``--think-scale``): asks for
   a batch (POST, redirect, screen page), rates all N images, opens screen 2, autosaves
   2-3 drafts per caption, submits. Latency per request type, p50/p95/p99.
5. Phase 2, closed loop: ``--closed-clients`` annotators without think time: requests/s.
6. Optional (``--with-background``): phase 1 again while a heavy read runs in another
   process (a streaming CSV export of all written captions); prints the p95 ratio.

Everything is bounded (duration, request budget, timeouts) and talks to 127.0.0.1 only;
the server is stopped on exit. The load generator shares the machine's cores with the
server and PostgreSQL, so the figures are a lower bound of what the server can do alone.

    .venv/bin/python benchmarks/load_annotators.py --duration 60 [--with-background] [--profile]
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
TARGETS = {"next_batch": 0.150, "submit": 0.200}
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
        headers = {"Content-Type": "application/json", "Accept": "application/json", "X-CSRFToken": self.csrf}
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
    def __init__(self, *, name: str, duration: float, think_scale: float, max_requests: int):
        self.name = name
        self.stats = Stats()
        self.deadline = time.monotonic() + duration
        self.think_scale = think_scale
        self.max_requests = max_requests
        self.started = time.monotonic()
        self.ended: float | None = None
        self.cpu = ""

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


def work_one_batch(browser: Browser, phase: Phase, campaign_id: int) -> bool:
    """Ask for a batch and finish it. Returns False when the campaign has no work left."""
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
    ids = [int(x) for x in ASSIGNMENT_RE.findall(html.decode())]
    if not ids:
        stats.error(kind, "no images on the page")
        return True
    api = f"/work/api/batch/{batch_id}"

    if kind == "screen1":
        for pk in ids:
            phase.think(*PACE["rate"])
            value = random.choice(["excellent", "good", "medium", "bad", "nei"])
            status, _, _ = browser.post_json(
                stats, "rating", f"{api}/rating/", {"assignment": pk, "value": value, "seconds": 3.2}
            )
            expect(stats, "rating", status, 200)
        phase.think(*PACE["open_writing"])
        status, _, _ = browser.post_json(
            stats, "open_writing", f"{api}/open-writing/", {"rating_seconds": 40.0}
        )
        if not expect(stats, "open_writing", status, 200):
            return True
        status, _, html = browser.get(stats, "screen2", f"/work/batch/{batch_id}/write/")
        if not expect(stats, "screen2", status, 200):
            return True

    # The draft-revision protocol as the page follows it: screen 2 names its images (control items
    # are never on it) and each draft's stored revision; every save sends the revision it grew from
    # and goes on from the one the server answers (a resumed batch starts from its stored drafts).
    revisions = {int(pk): int(rev) for pk, rev in SCREEN2_ITEM_RE.findall(html.decode())}
    for pk, base in revisions.items():
        words = ["Ein", "Hund", "läuft", "über", "den", "Strand", "am", "Abend", "neben", "dem", "Meer"]
        for step in range(1, random.randint(2, 3) + 1):
            phase.think(*PACE["draft"])
            text = " ".join(words[: 3 + 3 * step]) + f" {pk}"
            status, _, body = browser.post_json(
                stats,
                "draft",
                f"{api}/draft/",
                {"assignment": pk, "text": text, "base_revision": base},
            )
            if expect(stats, "draft", status, 200):
                base = json.loads(body)["revision"]
    phase.think(*PACE["submit"])
    status, _, _ = browser.post_json(
        stats, "submit", f"{api}/submit/", {"submit_key": secrets.token_hex(16), "writing_seconds": 90.0}
    )
    if expect(stats, "submit", status, 200):
        stats.event("batches submitted")
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
        phase.cpu = CPU_METER.report(cpu_before, CPU_METER.snapshot(), phase.stats.requests)
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


def server_env(args, url: str, media_root: str) -> dict[str, str]:
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
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")])),
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
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    connection.close()
    return {
        "campaign_id": campaign.pk,
        "usernames": [u.username for u in users[:-1]],
        "profile_username": users[-1].username,
        "history_captions": history,
        "history_campaign_id": (
            m.Campaign.objects.filter(name="bench history").values_list("pk", flat=True).first()
            if history
            else None
        ),
    }


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


def start_server(env: dict, port: int, log_path: Path, wsgi: str = "config.wsgi") -> subprocess.Popen:
    log = open(log_path, "wb")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen(
        [
            str(VENV_BIN / "gunicorn"),
            wsgi,
            "-w",
            "4",
            "-k",
            "gthread",
            "--threads",
            "8",
            "-b",
            f"127.0.0.1:{port}",
            # Browsers keep connections open between clicks; gunicorn's default of 2 s would
            # make most think-time pauses reconnect.
            "--keep-alive",
            "10",
            "--graceful-timeout",
            "5",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"gunicorn exited with {proc.returncode}; see {log_path}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                conn.close()
                return proc
        except OSError:
            time.sleep(0.2)
    stop_server(proc)
    sys.exit(f"gunicorn did not answer within 30 s; see {log_path}")


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


# --- query profile ------------------------------------------------------------------------------


def profile_queries(campaign_id: int, username: str) -> None:
    """Queries per request type, in process, through Django's test client on the bench data."""
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client()
    client.force_login(get_user_model().objects.get(username=username))
    rows = []

    def run(label, fn):
        with CaptureQueriesContext(connection) as ctx:
            response = fn()
        rows.append((label, response.status_code, len(ctx.captured_queries), ctx.captured_queries))
        return response

    r = run("next_batch (POST)", lambda: client.post(f"/work/campaign/{campaign_id}/work/"))
    batch_id = int(BATCH_RE.match(r["Location"]).group(1))
    page = run("screen1", lambda: client.get(f"/work/batch/{batch_id}/rate/"))
    ids = [int(x) for x in ASSIGNMENT_RE.findall(page.content.decode())]
    api = f"/work/api/batch/{batch_id}"
    for pk in ids:
        run(
            "rating",
            lambda pk=pk: client.post(
                f"{api}/rating/", {"assignment": pk, "value": "good"}, "application/json"
            ),
        )
    run("open_writing", lambda: client.post(f"{api}/open-writing/", {}, "application/json"))
    run("screen2", lambda: client.get(f"/work/batch/{batch_id}/write/"))
    for pk in ids:
        run(
            "draft",
            lambda pk=pk: client.post(
                f"{api}/draft/",
                {"assignment": pk, "text": f"Bild {pk}", "base_revision": 0},
                "application/json",
            ),
        )
    run(
        "submit",
        lambda: client.post(f"{api}/submit/", {"submit_key": secrets.token_hex(8)}, "application/json"),
    )
    seen = set()
    print("\nQueries per request (in process, Django test client):")
    for label, status, n, queries in rows:
        if label in seen:
            continue
        seen.add(label)
        print(f"  {label:<20} HTTP {status}  {n} queries")
        if os.environ.get("BENCH_SHOW_SQL"):
            for q in queries:
                print(f"      {q['time']}s  {q['sql'][:160]}")
    connection.close()


# --- main ---------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
        help="PostgreSQL server to use (its database name is ignored; see --db-name)",
    )
    parser.add_argument("--db-name", default="captioneval_bench", help="database to create (dropped first)")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/15")
    parser.add_argument("--images", type=int, default=4000)
    parser.add_argument("--annotators", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=5, help="N images per batch")
    parser.add_argument("--replication", type=int, default=2, help="K")
    parser.add_argument("--duration", type=float, default=150.0, help="seconds of each open-loop phase")
    parser.add_argument(
        "--think-scale",
        default="1",
        help="multiplies the think times of PACE (1 = a quick careful annotator); a comma list (e.g. 0.5,1) repeats phase 1 per value",
    )
    parser.add_argument("--max-requests", type=int, default=60000, help="request budget per phase")
    parser.add_argument("--closed-clients", type=int, default=32)
    parser.add_argument("--closed-duration", type=float, default=20.0)
    parser.add_argument("--login-concurrency", type=int, default=4)
    parser.add_argument("--with-background", action="store_true", help="also measure beside a heavy export")
    parser.add_argument("--history-captions", type=int, default=40000, help="rows for the export to stream")
    parser.add_argument("--profile", action="store_true", help="print the queries each request type makes")
    parser.add_argument(
        "--wsgi", default="config.wsgi", help="WSGI module to serve (A/B a change; PYTHONPATH is passed on)"
    )
    args = parser.parse_args()
    scales = [float(x) for x in str(args.think_scale).split(",") if x.strip()]

    url = bench_database_url(args.database_url, args.db_name)
    workdir = Path(tempfile.mkdtemp(prefix="captioneval-bench-"))
    media_root = str(workdir / "media")
    env = server_env(args, url, media_root)
    for key in (
        "DJANGO_SETTINGS_MODULE",
        "DATABASE_URL",
        "DJANGO_DEBUG",
        "DJANGO_ALLOWED_HOSTS",
        "DJANGO_MEDIA_ROOT",
    ):
        os.environ[key] = env[key]
    os.environ["DJANGO_CACHE_DIR"] = str(workdir / "cache")
    sys.path.insert(0, str(ROOT))

    print(f"CPU cores: {os.cpu_count()} (server, PostgreSQL and this load generator share them)")
    print(f"Database {args.db_name} on {urlparse(url).hostname}: recreating, migrating, filling ...")
    t0 = time.monotonic()
    recreate_database(url)
    setup = populate(args)
    print(
        f"  {args.images} images, {args.annotators} annotators, N={args.batch_size}, K={args.replication}"
        + (f", {setup['history_captions']} historical captions" if setup["history_captions"] else "")
        + f" in {time.monotonic() - t0:.1f} s"
    )
    if args.profile:
        profile_queries(setup["campaign_id"], setup["profile_username"])

    port = free_port()
    proc = start_server(env, port, workdir / "gunicorn.log", args.wsgi)
    global CPU_METER
    CPU_METER = CpuMeter(proc.pid, url)
    background_phase = None
    try:
        print(
            f"gunicorn {args.wsgi} -w 4 -k gthread --threads 8 on 127.0.0.1:{port} (DEBUG off, Redis cache)"
        )
        browsers = [Browser(port, name) for name in setup["usernames"]]
        t0 = time.monotonic()
        login_stats = login_all(browsers, args.login_concurrency)
        print(
            f"Warm-up: {len(browsers)} annotators logged in through the login form in {time.monotonic() - t0:.1f} s "
            f"(p50 {percentile(login_stats.latency['login'], 50) * 1000:.0f} ms: PBKDF2, not part of the targets)"
        )
        if login_stats.errors:
            print(f"  login errors: {dict(login_stats.errors)}")

        campaign_id = setup["campaign_id"]
        opened = {}
        for scale in scales:
            print(
                f"\nPhase 1 - open loop: {len(browsers)} annotators, think time x{scale:g} (rate {PACE['rate'][0] * scale:g}-{PACE['rate'][1] * scale:g} s per image), "
                f"{args.duration:.0f} s"
            )
            phase = run_phase(
                browsers,
                Phase(name="open", duration=args.duration, think_scale=scale, max_requests=args.max_requests),
                campaign_id,
            )
            secs = phase.ended - phase.started
            print(
                f"  {phase.stats.requests} requests in {secs:.1f} s = {phase.stats.requests / secs:.0f} req/s served"
            )
            print_table(phase.stats)
            print(f"  {phase.cpu}")
            opened[scale] = phase

        print(
            f"\nPhase 2 - closed loop: {args.closed_clients} annotators, no think time, {args.closed_duration:.0f} s"
        )
        closed = run_phase(
            browsers[: args.closed_clients],
            Phase(
                name="closed", duration=args.closed_duration, think_scale=0, max_requests=args.max_requests
            ),
            campaign_id,
        )
        secs = closed.ended - closed.started
        capacity = closed.stats.requests / secs
        print(f"  capacity: {closed.stats.requests} requests in {secs:.1f} s = {capacity:.0f} requests/s")
        print_table(closed.stats)
        print(f"  {closed.cpu}")

        if args.with_background:
            print(
                "\nPhase 3 - open loop again, beside a heavy read: `manage.py export captions` (XM3600 format,\n"
                f"  {setup['history_captions']} captions) back to back in another process at idle CPU priority."
            )
            print(f"  think time x{scales[-1]:g}, as the last phase 1")
            background = start_background(env, setup["history_campaign_id"], args.duration + 5)
            try:
                loaded = run_phase(
                    browsers,
                    Phase(
                        name="background",
                        duration=args.duration,
                        think_scale=scales[-1],
                        max_requests=args.max_requests,
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
                print(
                    f"  the export of {setup['history_captions']} captions ran {runs[-1]} times during the phase"
                )
            else:
                print(f"  export loop output: {out.decode()[:200]}")
            print_table(loaded.stats)
            print(f"  {loaded.cpu}")
            background_phase = loaded
        for browser in browsers:
            browser.close()
    finally:
        stop_server(proc)

    # --- verdict ---
    ok = True
    for scale, phase in opened.items():
        print(f"\nTargets, phase 1 with think time x{scale:g}:")
        for kind, target in TARGETS.items():
            p95 = percentile(phase.stats.latency.get(kind, []), 95)
            passed = p95 <= target
            ok &= passed
            print(
                f"  {kind} p95 {p95 * 1000:.0f} ms <= {target * 1000:.0f} ms: {'PASS' if passed else 'FAIL'}"
            )
        errors = sum(phase.stats.errors.values())
        print(f"  errors {errors} == 0: {'PASS' if errors == 0 else 'FAIL'}")
        ok &= errors == 0
    errors = sum(closed.stats.errors.values())
    print(
        f"\nClosed-loop capacity: {capacity:.0f} requests/s with {args.closed_clients} clients, errors {errors}"
    )
    ok &= errors == 0
    if background_phase is not None:
        base = opened[scales[-1]]
        before = percentile(annotator_requests(base.stats), 95)
        after = percentile(annotator_requests(background_phase.stats), 95)
        ratio = after / before
        passed = ratio <= BACKGROUND_RATIO_TARGET
        ok &= passed and not background_phase.stats.errors
        print(
            f"Annotator p95 beside the export {after * 1000:.0f} ms vs {before * 1000:.0f} ms alone: "
            f"ratio {ratio:.2f} <= {BACKGROUND_RATIO_TARGET}: {'PASS' if passed else 'FAIL'}"
            "  (meaningful only if that load alone is below capacity)"
        )
        for kind in TARGETS:
            b = percentile(base.stats.latency.get(kind, []), 95)
            a = percentile(background_phase.stats.latency.get(kind, []), 95)
            print(f"  {kind}: p95 {a * 1000:.0f} ms vs {b * 1000:.0f} ms (ratio {a / b:.2f})")
    shutil.rmtree(workdir, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
