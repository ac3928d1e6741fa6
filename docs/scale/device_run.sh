#!/usr/bin/env bash
# One prepared command for a lent GPU machine (the device tool's `run`; its image has PyTorch
# with CUDA and no network): the CUDA tests first, then as much of the GPU rung as the time
# allows, keeping each finished run's evidence, then everything packed into $OUT.
#   here, once:  python docs/scale/pack_data.py ../shared/data/cifar10-subset .device/cifar10-subset
#                echo /.device/ >> .git/info/exclude
#   then:        run(command="bash docs/scale/device_run.sh", carry=[".device"], timeout_s=600)
#   back here:   mkdir -p docs/scale/gpu && tar -xzf FILES_AT/gpu.tar.gz -C docs/scale/gpu; commit it
# The next lent machine starts from docs/scale/gpu (its records/runs/): it trains only the runs
# no earlier machine finished. RUNG_SECONDS (default 380) bounds the rung's part.
set -uo pipefail
OUT=${OUT:?the device tool sets OUT}
DATA=.device/cifar10-subset
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
mkdir -p /tmp/bin
printf '#!/bin/sh\nexec python3 -m collapse_lab.entry "$@"\n' > /tmp/bin/collapse-lab
chmod +x /tmp/bin/collapse-lab
export PATH=/tmp/bin:$PATH
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())"; } 2>&1 | tee "$OUT/machine.txt"
# 1. the CUDA tests (they skip on a CPU, so CI never runs them)
timeout 150 python3 -m pytest -q -o addopts="" -p no:cacheprovider -rs tests/training/test_trainer_cuda.py 2>&1 \
  | tee "$OUT/cuda-tests.txt"
# 2. the rung, from the evidence committed so far; SIGTERM at the bound keeps every finished run
[ -d "$DATA/cifar-10-batches-py" ] || { echo "device_run: $DATA missing: pack it first (see the top)" | tee "$OUT/rung.txt"; exit 2; }
rm -rf /tmp/gpu && mkdir -p /tmp/gpu
[ -d docs/scale/gpu ] && cp -r docs/scale/gpu/. /tmp/gpu/
timeout --signal=TERM "${RUNG_SECONDS:-380}" bash docs/scale/gpu_rung.sh "$DATA" /tmp/gpu /tmp/ck-gpu 60 2>&1 \
  | tee "$OUT/rung.txt"
echo "device_run: $(ls /tmp/gpu/records/runs 2>/dev/null | wc -l) run(s) with kept evidence" | tee -a "$OUT/rung.txt"
# 3. back: one archive (the tool returns at most 8 files)
tar -C /tmp/gpu -czf "$OUT/gpu.tar.gz" .
