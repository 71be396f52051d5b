"""RELIABILITY 17: production settings are hardened and refuse unsafe starts."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_manage(*args, **env_overrides):
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings.production",
            "DJANGO_ALLOWED_HOSTS": "captions.example.org",
        }
    )
    env.update(env_overrides)
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_check_deploy_passes_with_no_warnings():
    result = run_manage(
        "check", "--deploy", "--fail-level", "WARNING", DJANGO_SECRET_KEY=secrets.token_urlsafe(64)
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_refuses_to_start_without_secret_key():
    result = run_manage("check")
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY" in result.stderr


def test_refuses_insecure_secret_key():
    result = run_manage("check", DJANGO_SECRET_KEY="django-insecure-" + "a" * 50)
    assert result.returncode != 0
    assert "insecure" in result.stderr


def test_refuses_debug_on():
    result = run_manage("check", DJANGO_SECRET_KEY=secrets.token_urlsafe(64), DJANGO_DEBUG="true")
    assert result.returncode != 0
    assert "DJANGO_DEBUG must be off" in result.stderr


def test_refuses_an_orphan_timeout_shorter_than_three_heartbeats():
    """A live but busy worker's metric chunk would be taken over and computed twice (RELIABILITY 10)."""
    key = secrets.token_urlsafe(64)
    result = run_manage(
        "check", DJANGO_SECRET_KEY=key, METRIC_CHUNK_HEARTBEAT_SECONDS="40", METRIC_CHUNK_ORPHAN_SECONDS="90"
    )
    assert result.returncode != 0
    assert "METRIC_CHUNK_ORPHAN_SECONDS (90.0) must be at least three heartbeats" in result.stderr
    result = run_manage("check", DJANGO_SECRET_KEY=key, METRIC_CHUNK_HEARTBEAT_SECONDS="0")
    assert result.returncode != 0 and "METRIC_CHUNK_ORPHAN_SECONDS" in result.stderr
    result = run_manage(
        "check", DJANGO_SECRET_KEY=key, METRIC_CHUNK_HEARTBEAT_SECONDS="30", METRIC_CHUNK_ORPHAN_SECONDS="90"
    )
    assert result.returncode == 0, result.stderr
