#!/usr/bin/env bash
# The GPU rung of docs/scale.md (analyses/ladder/rungs-gpu.yaml: ResNet-20, lr 0.01, 10 local epochs, 1,000 images
# a class, 30 rounds, 5 seeds; fig2, fig3, journal fig4 and fig6), run first whenever a GPU is lent:
#   docs/scale/gpu_rung.sh DATA_ROOT [OUT] [STORE] [PILOT_SECONDS]
# 1. the plan (runs, estimate); 2. a pilot: PILOT_SECONDS (default 120) split between one process and
# four at once, each round timed; 3. the rung's runs as that many concurrent processes (resumable: the
# same command continues after a stop), then every verdict. Prints the pilot's JSON and the ladder's lines.
set -euo pipefail
DATA=${1:?usage: gpu_rung.sh DATA_ROOT [OUT] [STORE] [PILOT_SECONDS]}
OUT=${2:-ladder-gpu}; STORE=${3:-ck-gpu}; PILOT=${4:-120}
ENTRIES="feddecorr-fig2 feddecorr-fig3 journal-fig4 journal-fig6"
RUNGS=rungs-gpu
cd "$(dirname "$0")/../.."
python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 2)" \
  || { echo "gpu_rung: no CUDA device here; this script is for a GPU machine" >&2; exit 2; }
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true
collapse-lab ladder $ENTRIES --rungs $RUNGS --store "$STORE" --out "$OUT" --data-root "$DATA" --dry-run
# the pilot: the rung's settings (alpha 0.05, FedAvg), fp32 as the CPU rungs, each round timed
pilot() {  # pilot STORE SECONDS SEED...
  local st=$1 secs=$2; shift 2
  for s in "$@"; do
    timeout "$secs" collapse-lab train --preset cpu --dataset cifar10 --data-root "$DATA" \
      --dataset-option max_train_per_class=1000 --dataset-option max_test_per_class=200 --model resnet20 \
      --lr 0.01 --local-epochs 10 --rounds 30 --alpha 0.05 --seed "$s" --precision fp32 --keep-local none \
      --store "$st" >/dev/null 2>&1 &
  done
  wait || true
}
rm -rf "$STORE-pilot1" "$STORE-pilot4"
pilot "$STORE-pilot1" $((PILOT / 2)) 100
pilot "$STORE-pilot4" $((PILOT / 2)) 101 102 103 104
RUNS=$(collapse-lab ladder $ENTRIES --rungs $RUNGS --store "$STORE" --out "$OUT" --data-root "$DATA" --dry-run --json \
  | python3 -c "import json, sys; print(sum(r['to_train'] for r in json.load(sys.stdin)))")
WORKERS=$(python3 docs/scale/gpu_pilot.py "$RUNS" 30 100000 "$STORE-pilot1" "$STORE-pilot4" | tee /dev/stderr | tail -1)
echo "gpu_rung: $RUNS run(s) to train with $WORKERS concurrent process(es)"
collapse-lab ladder $ENTRIES --rungs $RUNGS --store "$STORE" --out "$OUT" --data-root "$DATA" --workers "$WORKERS" \
  --precision fp32
