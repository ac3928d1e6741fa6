#!/usr/bin/env bash
# The GPU rung (analyses/ladder/rungs-gpu.yaml) on a GPU machine that has no network, a fresh
# checkout of this repository and its own torch (2.11 to 2.13): nothing is installed, the
# package runs from PYTHONPATH. One call trains for a bounded time; every minute, and at the
# end, it leaves in $OUT what the next call needs, each file under 16 MiB, at most 8, no folder:
#   evidence.tar.gz   the finished runs' evidence and the rung's records (ladder --out)
#   state.tar.NNN     the unfinished runs' resumable state (collapse_lab.store.snapshot)
#   pilot.json        round times measured in the rung's own configuration
#   log.txt           the machine, the plan, the CUDA tests, the ladder's lines, the hashes
# The next call continues from them: copy the returned files into $CARRY (default .device/carry,
# an ignored folder that travels with the checkout) and run the same command. A killed call
# loses at most the last minute; the result is bit-identical to an uninterrupted run.
# Data: python docs/scale/pack_data.py ../shared/data/cifar10-subset .device/cifar10-subset writes
# .device/cifar10-subset.tar.xz. What travels is the checkout, the archive and $CARRY, 64 MiB in
# all, so the state packed for the next call gets the room the checkout and the data leave.
#
# Settings (environment): DATA (.device/cifar10-subset.tar.xz, or a folder; empty: the entries' own data),
# RUNGS (rungs-gpu), ENTRIES, PRESET (cpu), RUNG (one rung's name, optional), BUDGET (480:
# seconds the ladder trains), WORKERS (8) and STACK (1): runs at once, so the first runs finish
# in the first call; REQUIRE_CUDA (1; 0 rehearses the whole call on a CPU), DRY_RUN (0),
# CARRY (.device/carry), WORK (/tmp/gpu-rung: this machine's store and records).
set -uo pipefail
OUT=${OUT:?set OUT to the folder whose files come back}
cd "$(dirname "$0")/../.."
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
DATA=${DATA-.device/cifar10-subset.tar.xz}; DATA0=$DATA; RUNGS=${RUNGS:-rungs-gpu}; PRESET=${PRESET:-cpu}
ENTRIES=${ENTRIES:-feddecorr-fig2 feddecorr-fig3 journal-fig4 journal-fig6}
BUDGET=${BUDGET:-480}; WORKERS=${WORKERS:-8}; STACK=${STACK:-1}; CARRY=${CARRY:-.device/carry}
WORK=${WORK:-/tmp/gpu-rung}; STORE=$WORK/store; REC=$WORK/out
BIN=$(mktemp -d); printf '#!/bin/sh\nexec python3 -m collapse_lab.entry "$@"\n' > "$BIN/collapse-lab"
chmod +x "$BIN/collapse-lab"; export PATH=$BIN:$PATH
mkdir -p "$OUT"; : > "$OUT/log.txt"
log() { tee -a "$OUT/log.txt"; }
ARGS=($ENTRIES --rungs "$RUNGS" --preset "$PRESET" --store "$STORE" --out "$REC" --precision fp32)
[ -n "${RUNG:-}" ] && ARGS+=(--rung "$RUNG")
NODATA=0
rm -rf "$WORK"; mkdir -p "$STORE" "$REC"
if [ -n "$DATA" ] && [ -f "$DATA" ]; then  # pack_data.py's archive: unpacked on this machine
  mkdir -p "$WORK/data" && tar -xJf "$DATA" -C "$WORK/data" && DATA=$WORK/data
fi
if [ -n "$DATA" ] && [ -d "$DATA" ]; then ARGS+=(--data-root "$DATA"); elif [ -n "$DATA" ]; then NODATA=1; fi

# 0. the machine, and the code it runs (this checkout, not an installed copy)
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || echo "no NVIDIA GPU"
  python3 -c "import torch, collapse_lab; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), \
'collapse_lab from', collapse_lab.__file__)"; } 2>&1 | log
CUDA=$(python3 -c "import torch; print(int(torch.cuda.is_available()))")
# 1. the state the last call returned
[ -f "$CARRY/evidence.tar.gz" ] && tar -xzf "$CARRY/evidence.tar.gz" -C "$REC"
python3 -m collapse_lab.store.snapshot unpack "$CARRY" "$STORE" 2>&1 | log
# 2. the plan, and the calls it needs at the pilot's rate
collapse-lab ladder "${ARGS[@]}" --dry-run --json 2>&1 > "$WORK/plan.json" | log
python3 docs/scale/gpu_pilot.py calls "$WORK/plan.json" "$STORE" "$CARRY/pilot.json" "$BUDGET" 2>&1 | log
[ "$NODATA" = 1 ] && echo "device_run: $DATA is missing (python docs/scale/pack_data.py, see the top); the plan \
counts every run, and nothing trains" | log
if [ "${DRY_RUN:-0}" = 1 ] || [ "$NODATA" = 1 ] || { [ "$CUDA" = 0 ] && [ "${REQUIRE_CUDA:-1}" = 1 ]; }; then
  echo "device_run: dry-run only ($([ "$CUDA" = 0 ] && echo 'no CUDA device here; REQUIRE_CUDA=0 rehearses on a CPU' \
    || echo "DRY_RUN=1 or no data"))" | log
  exit 0
fi
# 3. the CUDA tests, on the first call only (they skip on a CPU)
if [ "$CUDA" = 1 ] && [ ! -f "$CARRY/pilot.json" ]; then
  timeout 30 python3 -m pytest -q -o addopts="" -p no:cacheprovider -rs -k fp32 tests/training/test_trainer_cuda.py \
    2>&1 | tail -5 | log
fi
# 4. the rung, bounded; every minute the state goes to $OUT, so a killed call loses one minute at most
back() {  # the returned files, each replaced whole
  mkdir -p "$WORK/next" && rm -f "$WORK/next"/*
  tar -czf "$WORK/next/evidence.tar.gz" -C "$REC" .
  python3 docs/scale/gpu_pilot.py measure "$STORE" "$CARRY/pilot.json" "$WORKERS" "$STACK" > "$WORK/next/pilot.json"
  python3 -m collapse_lab.store.snapshot pack "$STORE" "$WORK/next" "$ROOM" > "$WORK/packed.json"
  rm -f "$OUT"/state.tar.*; mv "$WORK/next"/* "$OUT"/
}
# the room the next call's carry has: 62 MiB less what travelled here but the carry (40 MiB at most)
ROOM=$(python3 docs/scale/gpu_pilot.py room "$CARRY")
echo "device_run: $((ROOM / 1024)) KiB of room for the unfinished runs' state" | log
( n=0; while [ ! -f "$WORK/stop" ]; do sleep 5; n=$((n + 5)); [ $((n % 60)) = 0 ] && back; done ) & LOOP=$!
timeout --signal=TERM "$BUDGET" collapse-lab ladder "${ARGS[@]}" --workers "$WORKERS" --stack "$STACK" 2>&1 | log
touch "$WORK/stop"; wait "$LOOP"
back
# 5. what comes back, checked against the limits, and the evidence's hashes (time fields left out)
cat "$WORK/packed.json" | log
python3 docs/scale/gpu_pilot.py limits "$OUT" 2>&1 | log
python3 docs/scale/gpu_pilot.py hashes "$REC" 2>&1 | log
