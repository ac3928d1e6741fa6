"""Time the training paths (``collapse-lab bench``): images/s and seconds per round of the fast
path against the official-style reference loop; runs/hour of a sweep of small runs against
one ``train`` call; or collapse-lab's accuracy curves beside the released FedDecorr code's."""
from __future__ import annotations

from typing import Callable

from ..errors import CollapseLabError
from .selection import say_stderr



def bench(workload: str = "cpu", *, models=("cnn", "mobilenetv2"), device="auto", images=None, test_images=None,
          clients=None, local_epochs=None, reference_epochs=None, rounds=None, warmup=None, augment=None,
          precision=None, channels_last=None, compile=None, cuda_graphs=None, parallel_clients=None,
          loader_workers=None, repeats=3, reference=True, official_evals=True, keep_memory=True, each=None,
          say: Callable[[str], None] = say_stderr) -> list[dict]:
    """One timing of ``workload`` (cpu: the paper's round scaled down; paper-cifar10: the
    paper's CIFAR-10 round) per model: every setting resolved and checked as ``train`` checks
    it before anything is measured; ``repeats`` alternating measurements of the reference
    loop (unless ``reference`` is False) and the fast path. ``each(result)``: as each model
    ends. ``loader_workers``: the reference loop's DataLoader workers."""
    from ..bench.checks import check_counts
    from ..bench.run import bench as time_model, settings_for

    check_counts(images, test_images, clients, local_epochs, reference_epochs, rounds, repeats, warmup, loader_workers)
    settings = [settings_for(workload, model=m, device=device, images=images, test_images=test_images, clients=clients,
                             local_epochs=local_epochs, reference_epochs=reference_epochs, rounds=rounds, warmup=warmup,
                             augment=augment, precision=precision, channels_last=channels_last, compile=compile,
                             cuda_graphs=cuda_graphs, parallel_clients=parallel_clients, workers=loader_workers,
                             repeats=repeats, reference=reference, official_evals=official_evals,
                             keep_memory=keep_memory) for m in models]
    for s in settings:
        if s.run.clients > s.images:
            raise CollapseLabError(f"--clients {s.run.clients} is more than --images {s.images}")
    results = []
    for s in settings:
        results.append(time_model(s, progress=say))
        if each is not None:
            each(results[-1])
    return results


def released_parity(released: str, *, data_root=None, store=None, say: Callable[[str], None] = say_stderr) -> dict:
    """collapse-lab's per-round accuracies beside the released code's (``released``: the file
    ``bench/released_driver.py`` writes) on the same partitions and initial weights."""
    from ..bench.parity import run
    from ..data_root import check_data_root, default_data_root

    root = default_data_root(None if data_root is None else check_data_root(data_root))[0]
    return run(released, data_root=root, store=store, progress=say)


def sweep_bench(*, seeds: int = 10, workers: int | None = None, rounds: int | None = None, stack: int | None = None,
                say: Callable[[str], None] = say_stderr) -> dict:
    """Runs/hour of a grid of small runs (digits, 4 alphas x ``seeds``) through ``sweep`` on
    ``workers`` processes (default the cores) against one ``train`` call."""
    from ..bench.checks import check_sweep_counts
    from ..bench.sweep_bench import sweep_bench as run
    from ..sweep.backends import cores

    check_sweep_counts(seeds, workers, rounds, stack)
    return run(seeds, workers or cores(), rounds, say=say, stack=stack)
