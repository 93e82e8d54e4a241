#!/usr/bin/env bash
# The capstone's GPU measurements, run on a machine with one GPU, in the background so that they outlast one
# shell command of limited length:
#
#   bash benchmarks/gpu_session.sh start DATA_DIR   # DATA_DIR holds fra.txt (Tatoeba) and multi30k/; returns at once
#   bash benchmarks/gpu_session.sh wait [SECONDS]   # waits until done (or SECONDS, default 540), prints progress,
#                                                   # and copies what exists so far into $OUT (or ./gpu-results)
#
# In order, on the GPU (one job at a time, so that each run's speed is its own):
#   1. benchmarks/nmt_benchmark.py --config gpu          -> benchmarks/results/nmt_gpu.txt        (Tatoeba en-fr)
#   2. benchmarks/capstone_figures.py                    -> chapters/figures/ch09/tatoeba_gpu_*   (chapter 9)
#   3. benchmarks/nmt_benchmark.py --config gpu-multi30k -> benchmarks/results/nmt_gpu_multi30k.txt
# Each benchmark trains for at most 10 minutes (plus its throughput measurement and evaluations).
# A dry run of the whole chain on a CPU (seconds of training):
#   EXTRA="--minutes 0.05 --test-max 40 --throughput-steps 2 --naive-pairs 3" DEVICE=cpu NVIDIA_SMI=true \
#   PYTHON=.venv/bin/python bash benchmarks/gpu_session.sh start ../shared/data-like-folder
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
LOG=runs/gpu-session
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 SEQCOURSE_PROGRESS=0

case "${1:-}" in
start)
    data=${2:?usage: gpu_session.sh start DATA_DIR}
    [ -f "$data/fra.txt" ] && [ -d "$data/multi30k" ] || { echo "error: $data needs fra.txt and multi30k/" >&2; exit 2; }
    mkdir -p "$LOG"
    rm -f "$LOG/done" "$LOG/failed"
    setsid nohup bash "$0" _run "$data" > "$LOG/session.log" 2>&1 < /dev/null &
    echo "started (pid $!); log in $LOG/session.log"
    ;;
_run)
    data=$2
    trap 'echo "FAILED at line $LINENO"; touch "$LOG/failed"' ERR
    ${NVIDIA_SMI:-nvidia-smi} --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$LOG/gpu.txt"
    gpu="one $(head -1 "$LOG/gpu.txt" | cut -d, -f1) GPU, torch $($PY -c 'import torch; print(torch.__version__)')"
    echo "== 1. Tatoeba, --config gpu ($(date +%T))"
    $PY benchmarks/nmt_benchmark.py --config gpu --data "$data/fra.txt" --out runs/gpu-tatoeba ${EXTRA:-} \
        > benchmarks/results/nmt_gpu.txt
    echo "== 2. chapter 9 figures ($(date +%T))"
    $PY benchmarks/capstone_figures.py runs/gpu-tatoeba tatoeba_gpu --device "${DEVICE:-cuda}" --machine "$gpu" \
        --command "python benchmarks/nmt_benchmark.py --config gpu --data fra.txt --out runs/gpu-tatoeba"
    echo "== 3. Multi30k de-en, --config gpu-multi30k ($(date +%T))"
    $PY benchmarks/nmt_benchmark.py --config gpu-multi30k --data "$data/multi30k" --out runs/gpu-multi30k ${EXTRA:-} \
        > benchmarks/results/nmt_gpu_multi30k.txt
    echo "== done ($(date +%T))"
    touch "$LOG/done"
    ;;
wait)
    limit=${2:-540}
    while [ ! -e "$LOG/done" ] && [ ! -e "$LOG/failed" ] && [ "$SECONDS" -lt "$limit" ]; do sleep 5; done
    dest=${OUT:-gpu-results}
    mkdir -p "$dest"
    for f in benchmarks/results/nmt_gpu.txt benchmarks/results/nmt_gpu_multi30k.txt \
             chapters/figures/ch09/tatoeba_gpu_metrics.json chapters/figures/ch09/tatoeba_gpu_curves.png \
             chapters/figures/ch09/tatoeba_gpu_heatmap.png "$LOG/session.log"; do
        [ -e "$f" ] && cp "$f" "$dest/"
    done
    [ -e runs/gpu-multi30k/curves.png ] && cp runs/gpu-multi30k/curves.png "$dest/multi30k_gpu_curves.png"
    [ -e runs/gpu-multi30k/metrics.json ] && cp runs/gpu-multi30k/metrics.json "$dest/multi30k_gpu_metrics.json"
    tail -n 25 "$LOG/session.log" benchmarks/results/nmt_gpu*.txt 2>/dev/null || true
    if [ -e "$LOG/done" ]; then echo "STATUS: done"; elif [ -e "$LOG/failed" ]; then echo "STATUS: failed"; exit 1
    else echo "STATUS: running"; fi
    ;;
*)
    sed -n '2,16p' "$0"
    exit 2
    ;;
esac
