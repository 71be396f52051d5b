# Sourced by demo.sh and test.sh: create .venv with a supported Python (3.11, 3.12 or 3.13, the oldest
# found first; PYTHON=/path/to/python overrides) and install a requirements file into it, once per
# content of that file (a stamp keeps re-runs fast).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
supported() { "$1" -c 'import sys; sys.exit(not ((3, 11) <= sys.version_info[:2] <= (3, 13)))' 2>/dev/null; }
PY="${PYTHON:-}"
if [ -n "$PY" ]; then
  supported "$PY" || { echo "PYTHON=$PY is not Python 3.11, 3.12 or 3.13." >&2; exit 1; }
else
  for cand in python3.11 python3.12 python3.13 python3; do
    if command -v "$cand" >/dev/null 2>&1 && supported "$cand"; then
      PY="$cand"; break
    fi
  done
fi
[ -n "$PY" ] || { echo "Python 3.11, 3.12 or 3.13 is needed (or set PYTHON=/path/to/python3.x)." >&2; exit 1; }
if [ -x .venv/bin/python ] && ! supported .venv/bin/python; then
  echo ".venv was made with an unsupported Python; remove it (rm -rf .venv) and run this again." >&2; exit 1
fi
[ -x .venv/bin/python ] || "$PY" -m venv .venv

# Where torch comes from. From the public package index alone, torch==2.13.0 resolves to the CUDA
# build (several GB of NVIDIA libraries). On a machine without an NVIDIA GPU the CPU build is taken
# from PyTorch's wheel index by itself, when that index answers (a machine that reaches only the public
# index, or a local wheel folder, goes on as before). By hand:
#   TORCH_CPU=1 bash scripts/test.sh                  # always the CPU index
#   TORCH_CPU=0 bash scripts/test.sh                  # never (the CUDA build, for an NVIDIA GPU)
#   PIP_TORCH_INDEX=<url> bash scripts/test.sh        # any other torch wheel index (a mirror)
# Each adds the index with --extra-index-url; requirements.txt's pins are unchanged, and
# torch==2.13.0 matches the CPU wheel's version 2.13.0+cpu (a local version label), torchvision==0.28.0
# likewise 0.28.0+cpu. Never install torch unpinned.
TORCH_CPU_INDEX="https://download.pytorch.org/whl/cpu"
has_nvidia_gpu() {
  [ -e /proc/driver/nvidia/version ] || { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; }
}
index_answers() {  # index_answers URL: the index answers within 5 seconds
  "$PY" - "$1" <<'PY' >/dev/null 2>&1
import sys, urllib.request
urllib.request.urlopen(sys.argv[1] + "/torch/", timeout=5).close()
PY
}
torch_index() {  # prints the extra index for torch, or nothing
  if [ -n "${PIP_TORCH_INDEX:-}" ]; then
    echo "$PIP_TORCH_INDEX"
  elif [ "${TORCH_CPU:-}" = 0 ]; then
    return 0
  elif [ -n "${TORCH_CPU:-}" ]; then
    echo "$TORCH_CPU_INDEX"
  elif ! has_nvidia_gpu && index_answers "$TORCH_CPU_INDEX"; then
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
