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

# Where torch comes from. From the public package index alone, torch==2.13.0 resolves to the CUDA
# build (several GB of NVIDIA libraries). On a machine without a GPU, take the CPU build from
# PyTorch's wheel index instead:
#   TORCH_CPU=1 bash scripts/test.sh                  # adds https://download.pytorch.org/whl/cpu
#   PIP_TORCH_INDEX=<url> bash scripts/test.sh        # any other torch wheel index (a mirror)
# Either adds the index with --extra-index-url; requirements.txt's pins are unchanged, and
# torch==2.13.0 matches the CPU wheel's version 2.13.0+cpu (a local version label), torchvision==0.28.0
# likewise 0.28.0+cpu. Never install torch unpinned.
TORCH_CPU_INDEX="https://download.pytorch.org/whl/cpu"
torch_index() {  # prints the extra index for torch, or nothing
  if [ -n "${PIP_TORCH_INDEX:-}" ]; then
    echo "$PIP_TORCH_INDEX"
  elif [ -n "${TORCH_CPU:-}" ] && [ "${TORCH_CPU}" != 0 ]; then
    echo "$TORCH_CPU_INDEX"
  fi
}

venv_install() {  # venv_install REQUIREMENTS_FILE
  local req="$1" stamp=".venv/.installed-$(basename "$1")"
  local index; index="$(torch_index)"
  local sum; sum="$( (cat "$req" requirements.txt; echo "torch index: $index") | sha256sum | cut -d' ' -f1)"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$sum" ]; then
    local extra=()
    if [ -n "$index" ]; then
      echo "Taking torch from $index (with the pins of requirements.txt) ..."
      extra=(--extra-index-url "$index")
    fi
    echo "Installing $req into .venv ..."
    .venv/bin/python -m pip install --quiet --disable-pip-version-check "${extra[@]}" -r "$req"
    echo "$sum" > "$stamp"
  fi
}
