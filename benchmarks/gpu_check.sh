#!/usr/bin/env bash
# The GPU figures of issue 28 in one go (docs/clip-on-gpu.md): bench_clip.py in fp32 and in bf16,
# bench_text_pass.py (the text pass padded, packed and compiled: the default model's XLM-R tower in fp32
# and bf16, the causal CLIP tower in bf16 with the varlen kernel), and
# bench_finetune.py (with the batch size chosen from free memory), all with --device cuda and the
# reference (the plain open_clip loop, the padded pass, or for fine-tuning the code as it was) measured in
# the same run. Sized to finish within 5 minutes on one H100; each step has its own time limit, so a slow
# step cannot eat the others' time.
#
#   bash benchmarks/gpu_check.sh [WHEEL_DIR]        (from the repository root, on the GPU machine)
#
# WHEEL_DIR (default .whl): wheels of the Python packages the GPU machine lacks (open_clip_torch and its
# pure-Python needs ftfy and wcwidth), installed with pip --no-index into a private folder; nothing is
# downloaded there. Skipped when open_clip already imports. .bench-data/, when present (carried), is used
# as the shared data folder: the XM3600 image sizes and the two real photos of ../shared/data.
# The log is written to $OUT/gpu_check.log when OUT is set (the device tool's folder), else to
# /tmp/gpu_check.log. SMOKE=1 runs the same steps tiny and on the CPU, to check the script itself (with
# 20 times the time limits; LIMIT_SCALE sets the factor).
set -uo pipefail
cd "$(dirname "$0")/.."
WHEELS=${1:-.whl}
PY=${PYTHON:-python3}
LOG=${OUT:-/tmp}/gpu_check.log
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
[ -d .bench-data ] && export BENCH_SHARED_DATA="$PWD/.bench-data"

# open_clip through the project's torchvision guard (evaluation/metrics/clip/compat.py), as the benchmarks import it.
IMPORT="from evaluation.metrics.clip import ensure_torchvision_loadable as e; e(); import open_clip, torch, torchvision"
if ! "$PY" -c "$IMPORT" >/dev/null 2>&1; then
    if ! ls "$WHEELS"/*.whl >/dev/null 2>&1; then
        echo "open_clip does not import here and $WHEELS holds no wheels: see docs/clip-on-gpu.md" >&2
        exit 2
    fi
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/gpu-check-site "$WHEELS"/*.whl || exit 2
    export PYTHONPATH=/tmp/gpu-check-site${PYTHONPATH:+:$PYTHONPATH}
fi

SCALE=${LIMIT_SCALE:-1}  # multiplies each step's time limit
if [ "${SMOKE:-0}" = 1 ]; then
    DEVICE=cpu
    SCALE=${LIMIT_SCALE:-20}
    CLIP=(--texts 32 --images 4 --repeat 1 --realistic-images 2 --threads --workers --long-median 0 --no-profile)
    TEXT=(--texts 32 --repeat 1 --compile)
    TEXT16=("${TEXT[@]}")
    TEXTX16=("${TEXT[@]}")
    TUNE=(--batch-size 4 auto --steps 1 --warmup 0)
else
    DEVICE=cuda
    CLIP=(--texts 16384 --images 512 --repeat 2 --realistic-images 32 --workers 2 4)
    TEXT=(--texts 16384 --repeat 3 --compile compile reduce-overhead)
    TEXT16=(--texts 16384 --repeat 3 --compile reduce-overhead)
    TEXTX16=(--texts 16384 --repeat 3 --compile)
    TUNE=(--batch-size 64 auto --steps 6 --warmup 2)
fi

step() {  # step SECONDS COMMAND...: run it under a time limit, say so when it is cut off
    local limit=$(($1 * SCALE))
    shift
    echo
    echo "\$ $* (limit ${limit} s, $(date -u +%T))"
    timeout --signal=INT "$limit" "$@"
    local rc=$?
    [ $rc -eq 124 ] && echo "(cut off after ${limit} s)"
    return 0
}

{
    echo "gpu_check: $(date -u), $(git rev-parse --short HEAD 2>/dev/null || echo 'no git'), device $DEVICE"
    command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    "$PY" -c "$IMPORT; print('torch', torch.__version__, 'torchvision', torchvision.__version__, 'open_clip', open_clip.__version__, 'cuda', torch.cuda.is_available())"
    step 70 "$PY" benchmarks/bench_clip.py --device "$DEVICE" --targets "${CLIP[@]}"
    step 55 "$PY" benchmarks/bench_clip.py --device "$DEVICE" --autocast bf16 --targets "${CLIP[@]}"
    step 40 "$PY" benchmarks/bench_text_pass.py --tower xlmr --device "$DEVICE" "${TEXT[@]}"
    step 20 "$PY" benchmarks/bench_text_pass.py --tower xlmr --device "$DEVICE" --autocast bf16 "${TEXTX16[@]}"
    step 40 "$PY" benchmarks/bench_text_pass.py --tower clip --device "$DEVICE" --autocast bf16 "${TEXT16[@]}"
    step 60 "$PY" benchmarks/bench_finetune.py --device "$DEVICE" "${TUNE[@]}"
    echo
    echo "gpu_check done $(date -u +%T)"
} 2>&1 | tee "$LOG"
