#!/usr/bin/env bash
# README command 2: the whole test suite, with the checks that fail the build.
# Creates .venv, installs the test requirements and Debian's chromium (for the browser
# tests; needs root or sudo), then runs ruff, the import-linter contracts, the Django checks and pytest. Extra
# arguments go to pytest. Uses $DATABASE_URL when set (CI sets PostgreSQL), else SQLite.
source "$(dirname "$0")/_venv.sh"
venv_install requirements-dev.txt

if ! command -v chromium >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo -n"
  echo "Installing Debian's chromium for the browser tests ..."
  { $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
    || echo "Could not install chromium: the browser tests will be skipped." >&2
fi

export DJANGO_SETTINGS_MODULE=config.settings.test
echo "== ruff"; .venv/bin/ruff check . && .venv/bin/ruff format --check .
echo "== import boundaries (import-linter contracts in pyproject.toml)"
.venv/bin/lint-imports --no-cache --no-logo
echo "== django checks"
.venv/bin/python manage.py check
.venv/bin/python manage.py makemigrations --check --dry-run
# Production refuses to start without its services; `check` does not connect to them, so any
# well-formed PostgreSQL and Redis URLs do here.
DJANGO_SETTINGS_MODULE=config.settings.production DJANGO_SECRET_KEY="$(.venv/bin/python -c 'import secrets; print(secrets.token_urlsafe(64))')" \
  DJANGO_ALLOWED_HOSTS=captions.example.org DATABASE_URL=postgres://captioneval@127.0.0.1:5432/captioneval \
  CELERY_BROKER_URL=redis://127.0.0.1:6379/0 REDIS_URL=redis://127.0.0.1:6379/1 \
  .venv/bin/python manage.py check --deploy --fail-level WARNING
echo "== pytest (database: ${DATABASE_URL:-sqlite})"
exec .venv/bin/python -m pytest "$@"
