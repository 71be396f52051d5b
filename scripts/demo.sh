#!/usr/bin/env bash
# README command 1: the demo. Creates .venv, installs, migrates, loads the demo data and a finished,
# simulated side-by-side set with its metric runs, and serves on http://127.0.0.1:${PORT:-8000}/ with
# the embedded defaults (SQLite, eager Celery).
source "$(dirname "$0")/_venv.sh"
# The demo never downloads models: a base model that is not on this machine fails at once with the
# loader's message (what is missing, how to provide it) instead of retrying downloads for minutes.
export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}" TRANSFORMERS_OFFLINE="${TRANSFORMERS_OFFLINE:-1}"
venv_install requirements.txt
PORT="${PORT:-8000}"
.venv/bin/python manage.py migrate --noinput -v 0
.venv/bin/python manage.py load_demo --url "http://127.0.0.1:${PORT}/"
# A finished side-by-side set with SIMULATED raters and its metric runs, so /reports/ has numbers at once.
.venv/bin/python manage.py load_demo_results --url "http://127.0.0.1:${PORT}/"
# The evaluation server's demo benchmark: simulated teams' entries on the leaderboard, a team that can submit.
.venv/bin/python manage.py load_demo_benchmark --url "http://127.0.0.1:${PORT}/"
# The server is what a user meets: DEBUG off, so errors show the platform's own pages, never Django's
# debug pages (load_demo above runs with the default DEBUG: it refuses to seed its published demo
# passwords where DEBUG is off). WhiteNoise serves the collected static files.
export DJANGO_DEBUG="${DJANGO_DEBUG:-false}"
.venv/bin/python manage.py collectstatic --noinput -v 0
echo
echo "Serving on http://127.0.0.1:${PORT}/ ... Ctrl+C stops."
exec .venv/bin/python manage.py runserver "127.0.0.1:${PORT}" --noreload
