"""RELIABILITY 17: production settings are hardened and refuse unsafe starts.

Each weak or missing value is refused twice over: ``config.settings.production`` stops at import with
an ImproperlyConfigured that names the setting, and the deploy checks of ``core.checks`` make
``manage.py check --deploy`` report it (``captioneval.E001``...) under any settings module. Settings are
imported in a subprocess with the environment set, as a server would start.
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Variables the settings read that would change the outcome if CI or a developer had them set.
SETTINGS_VARIABLES = ("DATABASE_URL", "CELERY_BROKER_URL", "CELERY_TASK_ALWAYS_EAGER", "REDIS_URL")
# A production environment that passes: the services need not be reachable for `check`.
GOOD = {
    "DJANGO_ALLOWED_HOSTS": "captions.example.org",
    "DATABASE_URL": "postgres://captioneval@127.0.0.1:5432/captioneval",
    "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0",
    "REDIS_URL": "redis://127.0.0.1:6379/1",
}
PLACEHOLDER_KEY = "change-me-to-50-random-characters-" + "x1y2z3" * 3  # .env.example's, made long


def run_manage(
    *args, settings="config.settings.production", unset=(), command=("manage.py",), **env_overrides
):
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("DJANGO_") and k not in SETTINGS_VARIABLES and k != "CONTENT_SECURITY_POLICY"
    }
    env.update({"DJANGO_SETTINGS_MODULE": settings, "DJANGO_SECRET_KEY": secrets.token_urlsafe(64), **GOOD})
    env.update(env_overrides)
    for name in unset:
        env.pop(name)
    return subprocess.run(
        [sys.executable, *command, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def import_production(**kwargs):
    """Import the production settings as a server starting would (faster than a manage.py command)."""
    return run_manage(command=("-c", "import config.settings.production"), **kwargs)


def test_check_deploy_passes_with_no_warnings():
    result = run_manage("check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout
    assert "captioneval." not in result.stdout + result.stderr


def test_refuses_to_start_without_secret_key():
    result = run_manage("check", unset=["DJANGO_SECRET_KEY"])
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY" in result.stderr


def test_refuses_debug_on():
    result = run_manage("check", DJANGO_DEBUG="true")
    assert result.returncode != 0
    assert "DJANGO_DEBUG must be off" in result.stderr


# (environment changes, the setting the refusal must name), one per weak or missing value.
REFUSED = {
    "django-insecure key": (
        {"DJANGO_SECRET_KEY": "django-insecure-" + "a1b2c3d4e5" * 5},
        "DJANGO_SECRET_KEY",
    ),
    "short key": ({"DJANGO_SECRET_KEY": secrets.token_urlsafe(64)[:49]}, "DJANGO_SECRET_KEY"),
    "4 distinct characters": ({"DJANGO_SECRET_KEY": "abcd" * 20}, "DJANGO_SECRET_KEY"),
    "repeated unit": ({"DJANGO_SECRET_KEY": "abcde" * 10}, "DJANGO_SECRET_KEY"),
    "repeated longer unit": ({"DJANGO_SECRET_KEY": "Kx7#pQ2v" * 8}, "DJANGO_SECRET_KEY"),
    ".env.example placeholder": ({"DJANGO_SECRET_KEY": PLACEHOLDER_KEY}, "DJANGO_SECRET_KEY"),
    "any host": ({"DJANGO_ALLOWED_HOSTS": "*"}, "DJANGO_ALLOWED_HOSTS"),
    "any host among others": ({"DJANGO_ALLOWED_HOSTS": "captions.example.org,*"}, "DJANGO_ALLOWED_HOSTS"),
    "no host": ({"DJANGO_ALLOWED_HOSTS": ""}, "DJANGO_ALLOWED_HOSTS"),
    "a public suffix": ({"DJANGO_ALLOWED_HOSTS": "captions.example.org,.co.uk"}, "DJANGO_ALLOWED_HOSTS"),
    "empty CSP": ({"CONTENT_SECURITY_POLICY": ""}, "CONTENT_SECURITY_POLICY"),
    "CSP allowing any script": (
        {"CONTENT_SECURITY_POLICY": "default-src 'self'; script-src *"},
        "CONTENT_SECURITY_POLICY",
    ),
    "CSP allowing any plugin and base URL": (
        {"CONTENT_SECURITY_POLICY": "default-src 'self'; object-src *; base-uri *"},
        "CONTENT_SECURITY_POLICY",
    ),
    "SQLite database": ({"DATABASE_URL": "sqlite:////tmp/captioneval-prod.sqlite3"}, "DATABASE_URL"),
    "eager tasks": ({"CELERY_TASK_ALWAYS_EAGER": "true"}, "CELERY_TASK_ALWAYS_EAGER"),
    "cache that is not Redis": ({"REDIS_URL": "file:///tmp/cache"}, "REDIS_URL"),
}
UNSET = ("DATABASE_URL", "CELERY_BROKER_URL", "REDIS_URL")


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_production_refuses_to_start_and_names_the_setting(case):
    changes, setting = REFUSED[case]
    result = import_production(**changes)
    assert result.returncode != 0, result.stdout
    assert "ImproperlyConfigured" in result.stderr, result.stderr[-2000:]
    assert setting in result.stderr.splitlines()[-1], result.stderr[-2000:]


@pytest.mark.parametrize("setting", UNSET)
def test_production_refuses_to_start_when_a_service_is_unset(setting):
    result = import_production(unset=[setting])
    assert result.returncode != 0, result.stdout
    assert "ImproperlyConfigured" in result.stderr, result.stderr[-2000:]
    assert setting in result.stderr.splitlines()[-1], result.stderr[-2000:]


# The deploy checks, run under the base settings (which start with anything) with DEBUG off: each weak
# value is reported with its id and the setting's name, and the good configuration reports none.
CHECKED = {
    "captioneval.E001": [{"DJANGO_SECRET_KEY": "abcde" * 10}, {"DJANGO_SECRET_KEY": PLACEHOLDER_KEY}],
    "captioneval.E002": [{"DJANGO_ALLOWED_HOSTS": "*"}],
    "captioneval.E003": [
        {"CONTENT_SECURITY_POLICY": "default-src 'self'; script-src 'self' 'unsafe-inline'"}
    ],
    "captioneval.E004": [{"DATABASE_URL": "sqlite:////tmp/captioneval-prod.sqlite3"}],
    "captioneval.E005": [{"CELERY_BROKER_URL": ""}, {"CELERY_TASK_ALWAYS_EAGER": "true"}],
    "captioneval.E006": [{"REDIS_URL": ""}],
}
CHECK_SETTING = {
    "captioneval.E001": "DJANGO_SECRET_KEY",
    "captioneval.E002": "DJANGO_ALLOWED_HOSTS",
    "captioneval.E003": "CONTENT_SECURITY_POLICY",
    "captioneval.E004": "DATABASE_URL",
    "captioneval.E005": "CELERY_BROKER_URL",
    "captioneval.E006": "REDIS_URL",
}


def check_deploy_base(**changes):
    return run_manage("check", "--deploy", settings="config.settings.base", DJANGO_DEBUG="false", **changes)


@pytest.mark.parametrize(
    ("check_id", "index"), [(i, n) for i, cases in CHECKED.items() for n in range(len(cases))]
)
def test_check_deploy_reports_each_weak_value(check_id, index):
    result = check_deploy_base(**CHECKED[check_id][index])
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if check_id in line]
    assert lines, result.stderr[-2000:]
    assert CHECK_SETTING[check_id] in "\n".join(lines)
    assert set(re.findall(r"captioneval\.E\d+", result.stderr)) == {check_id}, result.stderr[-2000:]


def test_check_deploy_with_base_settings_and_a_good_environment_reports_none_of_ours():
    result = check_deploy_base()
    assert "captioneval." not in result.stdout + result.stderr, result.stderr


def test_refuses_an_orphan_timeout_shorter_than_three_heartbeats():
    """A live but busy worker's unit would be taken over and computed twice (RELIABILITY 10). The old
    METRIC_CHUNK_* names still set the JOB_* settings (deprecated aliases)."""
    key = secrets.token_urlsafe(64)
    result = run_manage("check", DJANGO_SECRET_KEY=key, JOB_HEARTBEAT_SECONDS="40", JOB_ORPHAN_SECONDS="90")
    assert result.returncode != 0
    assert "JOB_ORPHAN_SECONDS (90.0) must be at least three heartbeats" in result.stderr
    result = run_manage("check", DJANGO_SECRET_KEY=key, JOB_HEARTBEAT_SECONDS="0")
    assert result.returncode != 0 and "JOB_ORPHAN_SECONDS" in result.stderr
    result = run_manage(
        "check", DJANGO_SECRET_KEY=key, METRIC_CHUNK_HEARTBEAT_SECONDS="40", METRIC_CHUNK_ORPHAN_SECONDS="90"
    )
    assert result.returncode != 0
    assert "JOB_ORPHAN_SECONDS (90.0) must be at least three heartbeats" in result.stderr
    result = run_manage("check", DJANGO_SECRET_KEY=key, JOB_HEARTBEAT_SECONDS="30", JOB_ORPHAN_SECONDS="90")
    assert result.returncode == 0, result.stderr


def test_the_embedded_default_sends_eager_tasks_without_a_broker_warning():
    """No broker named (scripts/demo.sh): a job sent eagerly builds no AMQP producer, so kombu's "No
    hostname was supplied" no longer appears on every command; the deploy check still says no broker."""
    code = (
        "import logging, django; logging.basicConfig(); django.setup()\n"
        "from celery import current_app\n"
        "with current_app.producer_or_acquire(None) as producer: print(producer.connection.transport_cls)\n"
        "from core import deploy; from django.conf import settings\n"
        "print(deploy.celery_problem(settings.CELERY_BROKER_URL, settings.CELERY_TASK_ALWAYS_EAGER))\n"
    )
    result = run_manage(
        command=("-c", code),
        settings="config.settings.base",
        unset=("CELERY_BROKER_URL", "REDIS_URL", "DATABASE_URL"),
    )
    assert result.returncode == 0, result.stderr
    assert "No hostname was supplied" not in result.stderr
    assert result.stdout.splitlines()[0] == "memory" and "CELERY_BROKER_URL is not set" in result.stdout
