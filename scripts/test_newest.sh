#!/usr/bin/env bash
# CI's second leg: a quick part of the suite on the newest supported Python (3.13), so that a change
# that only the newest interpreter refuses is caught. It builds .venv-newest with every requirement but
# the torch stack (torch, torchvision, open_clip_torch, transformers: on PyPI a GPU-less machine would
# pull several GB of CUDA wheels, and the full suite on the oldest Python already covers CLIP), then
# runs the tests that need neither torch nor a browser nor a real broker. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON_NEWEST:-}"
if [ -z "$PY" ]; then
  for cand in python3.13 "$(command -v pyenv >/dev/null 2>&1 && pyenv root)"/versions/3.13*/bin/python3.13; do
    if [ -n "$cand" ] && "$cand" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 13))' 2>/dev/null; then
      PY="$cand"; break
    fi
  done
fi
if [ -z "$PY" ]; then
  echo "No Python 3.13 here (set PYTHON_NEWEST=/path/to/python3.13): the quick leg on the newest Python is skipped." >&2
  exit 0
fi
[ -x .venv-newest/bin/python ] || "$PY" -m venv .venv-newest
stamp=".venv-newest/.installed"
sum="$(cat requirements.txt requirements-dev.txt | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$sum" ]; then
  echo "Installing the requirements but the torch stack into .venv-newest ($("$PY" --version)) ..."
  grep -v -E '^(torch|torchvision|open_clip_torch|transformers)==|^-r ' requirements.txt requirements-dev.txt \
    | sed 's/^[^:]*://' > .venv-newest/requirements.txt
  .venv-newest/bin/python -m pip install --quiet --disable-pip-version-check -r .venv-newest/requirements.txt
  echo "$sum" > "$stamp"
fi
export DJANGO_SETTINGS_MODULE=config.settings.test
echo "== pytest on $(.venv-newest/bin/python --version) (quick part: no torch, no browser, no real broker)"
exec .venv-newest/bin/python -m pytest -q -p no:cacheprovider -m "not browser and not redis" \
  tests/core tests/annotation tests/test_docs.py tests/test_prerequisites.py "$@"
