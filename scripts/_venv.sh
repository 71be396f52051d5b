# Sourced by demo.sh and test.sh: create .venv with Python 3.11 and install a requirements
# file into it, once per content of that file (a stamp keeps re-runs fast).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  for cand in python3.11 python3; do
    if command -v "$cand" >/dev/null 2>&1 && "$cand" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
      PY="$cand"; break
    fi
  done
fi
[ -n "$PY" ] || { echo "Python 3.11 is needed (set PYTHON=/path/to/python3.11)." >&2; exit 1; }
[ -x .venv/bin/python ] || "$PY" -m venv .venv

venv_install() {  # venv_install REQUIREMENTS_FILE
  local req="$1" stamp=".venv/.installed-$(basename "$1")"
  local sum; sum="$(cat "$req" requirements.txt | sha256sum | cut -d' ' -f1)"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$sum" ]; then
    echo "Installing $req into .venv ..."
    # torch is pinned to the CPU build 2.13.0 in requirements.txt; never ask for it unpinned.
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -r "$req"
    echo "$sum" > "$stamp"
  fi
}
