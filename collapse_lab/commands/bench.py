"""``collapse-lab bench``: images/s and seconds per round of the fast path and of the
reference loop, their ratio, and the feature-extraction rate."""
from __future__ import annotations

import json

import click

from ..errors import CollapseLabError
from .common import data_root_option
from .options import device_option, json_option, precision_option
from .run_options import run_option


@click.command("bench")
@click.option("--workload", "preset", default="cpu", show_default=True,
              help="What to time (not a training preset): cpu (the paper's round scaled down: 640 images, 10 local epochs) or paper-cifar10 (50,000 images, 10 clients, alpha 0.5, "
                   "10 local epochs, batch 64: the paper's CIFAR-10 round); released-parity: no timing, collapse-lab's "
                   "accuracy curves beside the released FedDecorr code's from --released (docs/conventions.md).")
@click.option("--released", "released_file", type=click.Path(dir_okay=False), default=None,
              help="released-parity: the released code's per-round accuracies (written by "
                   "collapse_lab/bench/released_driver.py; tests/vectors/released_parity/ keeps one).")
@data_root_option
@click.option("--store", type=click.Path(file_okay=False), default=None,
              help="released-parity: store for collapse-lab's runs (default: a new temporary folder; runs there are reused).")
@click.option("--model", default="cnn,mobilenetv2", show_default=True, help="Model(s), comma-separated.")
@device_option
@click.option("--images", type=int, default=None, help="Training images (preset's by default).")
@click.option("--test-images", type=int, default=None, help="Test images (preset's by default).")
@click.option("--clients", type=int, default=None, help="Clients (10).")
@click.option("--local-epochs", type=int, default=None, help="Local epochs of the fast path (preset's).")
@click.option("--reference-epochs", type=int, default=None, help="Local epochs of the reference loop (preset's).")
@click.option("--rounds", type=int, default=None, help="Timed rounds (1).")
@click.option("--warmup", type=int, default=None, help="Untimed first rounds (paper-cifar10: 1, for compilation and kernel choice; cpu: 0, "
                   "each path then gets one untimed warm-up epoch).")
@run_option("--augment")
@precision_option
@run_option("--channels-last")
@run_option("--compile")
@run_option("--cuda-graphs")
@run_option("--parallel-clients")
@click.option("--loader-workers", type=int, default=None,
              help="Reference DataLoader workers (6 on CUDA as the official code, 0 on CPU).")
@click.option("--repeats", type=int, default=3, show_default=True,
              help="Alternating measurements (reference, fast, reference, fast, ...); median and spread are reported.")
@click.option("--no-reference", is_flag=True, help="Time the fast path only.")
@click.option("--sweep", is_flag=True, help="Instead: runs/hour of a grid of small runs (digits, 4 alphas x --sweep-seeds) "
                                            "through `sweep` (local) against one `train` invocation.")
@click.option("--sweep-seeds", type=int, default=10, show_default=True, help="--sweep: seeds per alpha.")
@click.option("--sweep-workers", type=int, default=None, help="--sweep: worker processes (default: the cores).")
@click.option("--sweep-rounds", type=int, default=None, help="--sweep: rounds per run (default: the preset's, 30).")
@click.option("--sweep-stack", type=int, default=None, help="--sweep: runs per stack (default: the runs / workers).")
@click.option("--keep-memory/--no-keep-memory", default=True, show_default=True,
              help="Fast path keeps freed host memory for reuse (glibc thresholds; see docs/fast-path.md).")
@click.option("--official-evals/--no-official-evals", default=True, show_default=True,
              help="Reference round evaluates like the official code: every client on its training loader and the "
                   "test set before and after local training, the global model on the training and test sets.")
@json_option
def bench_cmd(preset, model, device, images, test_images, clients, local_epochs, reference_epochs, rounds, warmup,
              augment, precision, channels_last, compile, cuda_graphs, parallel_clients, loader_workers, repeats, no_reference,
              sweep, sweep_seeds, sweep_workers, sweep_rounds, sweep_stack, keep_memory, official_evals, as_json,
              released_file, store, data_root):
    """Benchmark the fast path against the official-style reference loop (or, with --sweep,
    a sweep of small runs against training them one after another; or, with
    --workload released-parity, collapse-lab's accuracy against the released code's)."""
    from ..actions import bench as action

    if (preset == "released-parity") != (released_file is not None):
        raise CollapseLabError("--released goes with --workload released-parity (and that workload needs it): give both")
    say = (lambda m: click.echo(m, err=True))
    if preset == "released-parity":
        from ..bench.parity import text

        r = action.released_parity(released_file, data_root=data_root, store=store, say=say)
        click.echo(json.dumps(r, indent=2) if as_json else text(r))
        return
    if sweep:
        from ..bench.sweep_bench import sweep_text

        r = action.sweep_bench(seeds=sweep_seeds, workers=sweep_workers, rounds=sweep_rounds, stack=sweep_stack,
                               say=say)
        click.echo(json.dumps(r, indent=2) if as_json else sweep_text(r))
        return
    from ..bench.checks import models_of
    from ..bench.text import text

    results = action.bench(preset, models=models_of(model), device=device, images=images, test_images=test_images,
                           clients=clients, local_epochs=local_epochs, reference_epochs=reference_epochs,
                           rounds=rounds, warmup=warmup, augment=augment, precision=precision,
                           channels_last=channels_last, compile=compile, cuda_graphs=cuda_graphs,
                           parallel_clients=parallel_clients, loader_workers=loader_workers, repeats=repeats,
                           reference=not no_reference, official_evals=official_evals, keep_memory=keep_memory,
                           each=None if as_json else (lambda r: click.echo(text(r))), say=say)
    if as_json:
        click.echo(json.dumps({"results": results}, indent=2))
