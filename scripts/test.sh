#!/usr/bin/env bash
# README command 2: the whole test suite, with the checks that fail the build.
# Creates .venv, installs the test requirements, and Debian's chromium (for the browser tests) and
# default-jre-headless (java, for the PTB tokenizer and METEOR tests, which run the Java jars shipped in
# pycocoevalcap) when they are missing (apt; needs root or sudo), then runs ruff, the import-linter
# contracts, the Django checks and pytest. Extra arguments go to pytest. Uses $DATABASE_URL when set (CI
# sets PostgreSQL), else SQLite. TORCH_CPU=1 takes torch from PyTorch's CPU wheel index (scripts/_venv.sh).
source "$(dirname "$0")/_venv.sh"
venv_install requirements-dev.txt

# Debian packages the tests need, each installed only when its command is missing. Without apt (or
# without root or sudo) the script says what could not be installed and goes on: the tests that need it
# are skipped with the reason; under CI=true the java tests fail instead (tests/prerequisites.py).
missing=()  # Debian packages whose command is not here
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v java >/dev/null 2>&1 || missing+=(default-jre-headless)
if [ "${#missing[@]}" -gt 0 ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo -n"
  echo "Installing Debian's ${missing[*]} for the tests ..."
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "apt-get is not available here: install ${missing[*]} yourself." >&2
  elif ! { $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; }; then
    echo "Could not install ${missing[*]} (apt needs root, or sudo without a password)." >&2
  fi
  command -v chromium >/dev/null 2>&1 || echo "Without chromium the browser tests will be skipped." >&2
  command -v java >/dev/null 2>&1 \
    || echo "Without java the PTB tokenizer and METEOR tests will be skipped (under CI=true: they fail)." >&2
fi

export DJANGO_SETTINGS_MODULE=config.settings.test
echo "== ruff"; .venv/bin/ruff check . && .venv/bin/ruff format --check .
echo "== import boundaries (import-linter contracts in pyproject.toml)"
.venv/bin/lint-imports --no-cache --no-logo
echo "== django checks"
.venv/bin/python manage.py check
.venv/bin/python manage.py makemigrations --check --dry-run
# The committed interface catalogues (.mo) say what their .po files say (Babel; no gettext needed).
.venv/bin/python manage.py compile_translations --check
# Production refuses to start without its services; `check` does not connect to them, so any
# well-formed PostgreSQL and Redis URLs do here.
DJANGO_SETTINGS_MODULE=config.settings.production DJANGO_SECRET_KEY="$(.venv/bin/python -c 'import secrets; print(secrets.token_urlsafe(64))')" \
  DJANGO_ALLOWED_HOSTS=captions.example.org DATABASE_URL=postgres://captioneval@127.0.0.1:5432/captioneval \
  CELERY_BROKER_URL=redis://127.0.0.1:6379/0 REDIS_URL=redis://127.0.0.1:6379/1 \
  .venv/bin/python manage.py check --deploy --fail-level WARNING
echo "== pytest (database: ${DATABASE_URL:-sqlite})"
exec .venv/bin/python -m pytest "$@"
