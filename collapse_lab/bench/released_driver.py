"""Run the released FedDecorr code (bytedance/FedDecorr) unmodified on a CPU and write its
per-round global test accuracy for ``collapse-lab bench --workload released-parity``.

This file runs in *the released code's* Python environment (its own virtualenv with torch
and torchvision; collapse-lab is not imported), e.g.::

    python3 -m venv rel && rel/bin/pip install torch==2.14.1 torchvision==0.29.1
    git clone https://github.com/bytedance/FedDecorr fdc
    rel/bin/python collapse_lab/bench/released_driver.py --code fdc \\
        --data-root ../shared/data/cifar10-subset --seeds 2,3,4,5,6 --out released.json

Nothing of the released code is changed or copied: its ``main.py`` runs as a script (one
process per seed) with three things patched around it, none of which touches what it
computes: ``.cuda()`` is the identity (``--device cpu``, the default; ``--device cuda``
leaves it as written), torchvision's CIFAR-10 md5 check
passes (a subset in the official layout has other checksums), and with
``--skip-logging-evals`` the evaluations that only feed its log (every client's accuracy
on its training and the test set before and after local training, the global model's
training accuracy) return nothing. With them kept (the default) its data loaders' random
streams are consumed exactly as on the authors' GPUs.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import runpy
import subprocess
import sys
import tempfile
import time

FORMAT = "collapse-lab released-parity 1"
# the released main.py's flags for the configuration of issue 40 (FedAvg, ResNet-20, CIFAR-10)
DEFAULTS = {"dataset": "cifar10", "model": "resnet20", "partition": "noniid", "alpha": 0.5, "n_parties": 10,
            "approach": "fedavg", "n_comm_round": 20, "epochs": 1, "lr": 0.01, "rho": 0.9, "weight_decay": 1e-5,
            "batch_size": 64}
ACC = re.compile(r">> Global Model Test accuracy: ([0-9.eE+-]+)")


def _one_seed(a) -> None:
    """Child process: run main.py for one seed, print one JSON line of per-round accuracies."""
    import logging

    import torch
    import torch.nn as nn
    import torchvision.datasets as tvd
    import torchvision.datasets.cifar as tvd_cifar

    if a.device == "cpu":  # the released code moves everything with .cuda(): on a CPU, stay
        torch.Tensor.cuda = lambda self, *args, **kw: self
        nn.Module.cuda = lambda self, *args, **kw: self
    for cls in (tvd.CIFAR10, tvd.CIFAR100):
        cls._check_integrity = lambda self: True
    tvd_cifar.check_integrity = lambda *args, **kw: True  # batches.meta is checked on its own
    if a.threads:
        torch.set_num_threads(a.threads)
    sys.path.insert(0, a.code)
    os.chdir(a.code)
    if a.skip_logging_evals:
        _only_global_test()
    accs, times = [], []

    class Grab(logging.Handler):
        def emit(self, rec):
            m = ACC.search(rec.getMessage())
            if m:
                accs.append(float(m.group(1)))
                times.append(time.perf_counter())

    cfg = json.loads(a.config)
    tmp = tempfile.mkdtemp(prefix="released-")
    sys.argv = ["main.py"] + [f"--{k.replace('batch_size', 'batch-size')}={v}" for k, v in cfg.items()] + [
        f"--init_seed={a.seed}", f"--datadir={os.path.abspath(a.data_root)}", f"--logdir={tmp}/logs",
        f"--ckptdir={tmp}/models", "--print_interval=1000000",  # no --log_file_name: main.py needs it unset
        f"--save_interval={10 ** 9}"]
    real_basic_config = logging.basicConfig

    def basic_config(**kw):  # main.py resets the root handlers, then calls this: add ours after it
        real_basic_config(**kw)
        logging.getLogger().addHandler(Grab())
    logging.basicConfig = basic_config
    t0 = time.perf_counter()
    runpy.run_path(os.path.join(a.code, "main.py"), run_name="__main__")
    print(json.dumps({"seed": a.seed, "test_acc": accs, "seconds": [t - t0 for t in times],
                      "torch": torch.__version__}))


def _only_global_test() -> None:
    """The released code's evaluations that only feed its logs skipped: its
    ``compute_accuracy`` runs for the global model on the test set alone (the others
    return zeros), so a round costs its training and one evaluation."""
    import approach.fedavg as fedavg

    real, keep = fedavg.compute_accuracy, {}
    init = fedavg.FedAvg.__init__

    def record(self, *args, **kw):
        init(self, *args, **kw)
        keep["global"], keep["test"] = self.global_net, self.test_dl

    def only_global_test(model, loader):
        if model is keep.get("global") and loader is keep.get("test"):
            return real(model, loader)
        return 0.0, 0.0
    fedavg.FedAvg.__init__, fedavg.compute_accuracy = record, only_global_test


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--code", required=True, help="a checkout of bytedance/FedDecorr")
    p.add_argument("--data-root", required=True, help="folder holding cifar-10-batches-py")
    p.add_argument("--seeds", default="2,3,4,5,6", help="comma-separated --init_seed values")
    p.add_argument("--out", required=True, help="JSON file to write")
    p.add_argument("--set", action="append", default=[], metavar="FLAG=VALUE",
                   help=f"a main.py flag (repeatable); defaults {DEFAULTS}")
    p.add_argument("--skip-logging-evals", action="store_true", help="skip the evaluations that only feed the log")
    p.add_argument("--threads", type=int, default=0, help="torch intra-op threads (0: torch's default)")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                   help="cpu: .cuda() is the identity; cuda: the released code runs on the GPU as written")
    p.add_argument("--seed", type=int, help=argparse.SUPPRESS)
    p.add_argument("--config", help=argparse.SUPPRESS)
    return p


def main(argv=None) -> int:
    p = parser()
    a = p.parse_args(argv)
    if a.seed is not None:
        _one_seed(a)
        return 0
    if not os.path.isfile(os.path.join(a.code, "main.py")):
        p.error(f"--code {a.code}: no main.py there; give a checkout of bytedance/FedDecorr")
    cfg = dict(DEFAULTS)
    for s in a.set:
        k, sep, v = s.partition("=")
        if not sep or k not in DEFAULTS:
            p.error(f"--set {s!r}: use FLAG=VALUE with FLAG one of {', '.join(DEFAULTS)}")
        cfg[k] = type(DEFAULTS[k])(v)
    try:
        seeds = [int(s) for s in a.seeds.split(",") if s.strip()]
    except ValueError:
        p.error(f"--seeds {a.seeds!r}: give integers separated by commas")
    if not seeds or len(set(seeds)) != len(seeds):
        p.error(f"--seeds {a.seeds!r}: give distinct seeds")
    out = {"format": FORMAT, "code": "bytedance/FedDecorr", "config": cfg, "logging_evals": not a.skip_logging_evals,
           "device": a.device, "seeds": {}, "seconds": {}}
    for s in seeds:
        cmd = [sys.executable, os.path.abspath(__file__), "--code", os.path.abspath(a.code), "--data-root",
               a.data_root, "--out", a.out, "--seed", str(s), "--config", json.dumps(cfg), "--threads", str(a.threads),
               "--device", a.device]
        if a.skip_logging_evals:
            cmd.append("--skip-logging-evals")
        print(f"released code, seed {s} ...", file=sys.stderr, flush=True)
        r = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
        if r.returncode != 0:
            print(f"seed {s}: the released code exited {r.returncode}", file=sys.stderr)
            return 1
        rec = json.loads(r.stdout.strip().splitlines()[-1])
        out["seeds"][str(s)], out["seconds"][str(s)], out["torch"] = rec["test_acc"], rec["seconds"], rec["torch"]
        print(f"  seed {s}: round {len(rec['test_acc'])} test acc {rec['test_acc'][-1]:.4f} "
              f"({rec['seconds'][-1]:.0f} s)", file=sys.stderr, flush=True)
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(out, f, indent=1)
    os.replace(tmp, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
