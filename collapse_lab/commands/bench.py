"""``collapse-lab bench``: images/s and seconds per round of the fast path and of the
reference loop, their ratio, and the feature-extraction rate."""
from __future__ import annotations

import json

import click

from ..errors import CollapseLabError
from .common import checked_data_root, data_root_option
from .options import device_option, json_option, precision_option


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
@click.option("--augment", default=None, help="Augmentation (crop+flip, the paper's CIFAR-10 setting).")
@precision_option
@click.option("--channels-last/--no-channels-last", default=None, help="Fast path memory format (on).")
@click.option("--compile", default=None, help="Fast path torch.compile mode: off, default, reduce-overhead, max-autotune "
                                              "(default: off; see docs/fast-path.md for when it pays).")
@click.option("--cuda-graphs", default=None, help="Fast path: capture local steps as CUDA graphs: auto, on, off.")
@click.option("--parallel-clients", type=int, default=None, help="Fast path clients trained at once "
                                                                 "(0: automatic, as in train).")
@click.option("--workers", type=int, default=None, help="Reference DataLoader workers (6 on CUDA as the official code, 0 on CPU).")
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
              augment, precision, channels_last, compile, cuda_graphs, parallel_clients, workers, repeats, no_reference,
              sweep, sweep_seeds, sweep_workers, sweep_rounds, sweep_stack, keep_memory, official_evals, as_json,
              released_file, store, data_root):
    """Benchmark the fast path against the official-style reference loop (or, with --sweep,
    a sweep of small runs against training them one after another; or, with
    --workload released-parity, collapse-lab's accuracy against the released code's)."""
    if (preset == "released-parity") != (released_file is not None):
        raise CollapseLabError("--released goes with --workload released-parity (and that workload needs it): give both")
    if preset == "released-parity":
        from ..bench.parity import run, text
        from ..data_root import default_data_root

        r = run(released_file, data_root=default_data_root(checked_data_root(data_root))[0], store=store,
                progress=lambda m: click.echo(m, err=True))
        click.echo(json.dumps(r, indent=2) if as_json else text(r))
        return
    if sweep:
        return _sweep_bench(sweep_seeds, sweep_workers, sweep_rounds, sweep_stack, as_json)
    from ..bench.run import bench, settings_for
    from ..bench.text import text

    from ..bench.checks import check_counts, models_of

    models = models_of(model)
    check_counts(images, test_images, clients, local_epochs, reference_epochs, rounds, repeats, warmup, workers)
    # every setting is resolved and checked (as by train) before anything is measured
    settings = [settings_for(preset, model=m, device=device, images=images, test_images=test_images, clients=clients,
                             local_epochs=local_epochs, reference_epochs=reference_epochs, rounds=rounds, warmup=warmup,
                             augment=augment, precision=precision, channels_last=channels_last, compile=compile,
                             cuda_graphs=cuda_graphs, parallel_clients=parallel_clients, workers=workers,
                             repeats=repeats, reference=not no_reference, official_evals=official_evals,
                             keep_memory=keep_memory) for m in models]
    for s in settings:
        if s.run.clients > s.images:
            raise CollapseLabError(f"--clients {s.run.clients} is more than --images {s.images}")
    results = []
    for s in settings:
        results.append(bench(s, progress=lambda msg: click.echo(msg, err=True)))
        if not as_json:
            click.echo(text(results[-1]))
    if as_json:
        click.echo(json.dumps({"results": results}, indent=2))


def _sweep_bench(sweep_seeds, sweep_workers, sweep_rounds, sweep_stack, as_json: bool) -> None:
    """--sweep: a sweep of small runs against training them one after another."""
    from ..bench.sweep_bench import sweep_bench, sweep_text
    from ..sweep.backends import cores

    from ..bench.checks import check_sweep_counts

    check_sweep_counts(sweep_seeds, sweep_workers, sweep_rounds, sweep_stack)
    r = sweep_bench(sweep_seeds, sweep_workers or cores(), sweep_rounds, say=lambda m: click.echo(m, err=True),
                    stack=sweep_stack)
    if as_json:
        click.echo(json.dumps(r, indent=2))
        return
    click.echo(sweep_text(r))
