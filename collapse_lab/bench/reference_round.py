"""One FedAvg round the way the official FedDecorr code trains it (``bench.reference``'s
per-image pipeline, DataLoader, fresh optimizer per client, official evaluations), on the
fast path's partition, batch order and initial model: the bench's baseline and the tests'
independent oracle for the trainer."""
from __future__ import annotations

import random
import time
from pathlib import Path

import numpy as np
import torch

from ..config import RunConfig
from ..data import Dataset
from ..methods.aggregate import weighted_average
from ..training.local import batches
from ..training.prepare import init_model, sample_clients
from ..store import RunDir
from ..seeds import PURPOSE_BATCHES, seed_for
from . import reference as ref


def client_batches(cfg: RunConfig, n: int, r: int, k: int, epochs: int) -> list[list[torch.Tensor]]:
    """The batches of client k in round r, epoch by epoch: the same generator as the engine."""
    gen = torch.Generator().manual_seed(seed_for(cfg.seed, PURPOSE_BATCHES, r, k))
    return [batches(n, cfg.batch_size, gen) for _ in range(epochs)]


def hwc_arrays(ds: Dataset) -> dict[str, np.ndarray]:
    """The data set as the official ``CIFAR10_truncated`` holds it: numpy HWC uint8 images."""
    return {"train": ds.train_x.permute(0, 2, 3, 1).contiguous().numpy(), "train_y": ds.train_y.numpy(),
            "test": ds.test_x.permute(0, 2, 3, 1).contiguous().numpy(), "test_y": ds.test_y.numpy()}


def reference_round(cfg: RunConfig, ds: Dataset, part, model: torch.nn.Module, global_state: dict, r: int,
                    device: torch.device, workers: int, epochs: int, out: Path | None = None,
                    official_evals: bool = False, arrays: dict | None = None, say=None) -> dict:
    """One FedAvg round the official way; returns the new global state, client states,
    steps and the seconds spent in local training proper.

    With ``official_evals`` every client is evaluated as the official ``_local_training``
    does: accuracy on its own (augmented) training loader and on the test set, before and
    after local training. ``arrays``: ``hwc_arrays(ds)``, computed once by the caller."""
    a = arrays if arrays is not None else hwc_arrays(ds)
    images, labels, test_images, test_labels = a["train"], a["train_y"], a["test"], a["test_y"]
    transform = ref.OfficialTransform(cfg.augment, ds.mean, ds.std)
    states, sizes, steps, n_images, train_seconds = {}, [], {}, 0, 0.0

    def client_evals(ix):
        ref.evaluate_reference(model, images[ix], labels[ix], ds.mean, ds.std, device, workers=workers,
                               transform=transform, batch_size=cfg.batch_size)
        ref.evaluate_reference(model, test_images, test_labels, ds.mean, ds.std, device, workers=workers)

    for k in sample_clients(cfg, r):
        ix = part.client_indices[k]
        model.load_state_dict(global_state)
        if official_evals:
            client_evals(ix)
        orders = client_batches(cfg, len(ix), r, k, epochs)
        loaders = [ref.client_loader(images[ix], labels[ix], transform, order, workers) for order in orders]
        t0 = time.perf_counter()
        steps[k] = ref.train_client_reference(model, loaders, device, lr=cfg.lr, momentum=cfg.momentum,
                                              weight_decay=cfg.weight_decay)
        train_seconds += time.perf_counter() - t0
        if official_evals:
            client_evals(ix)
        n_images += sum(len(b) for order in orders for b in order)
        if say is not None:
            say(f"  reference round {r} client {k}: {len(ix)} samples, local training {time.perf_counter() - t0:.1f} s")
        states[k] = {n: v.detach().clone() for n, v in model.state_dict().items()}
        if out is not None:
            RunDir(out).save_client(r, k, states[k])
        sizes.append(len(ix))
    new_global = weighted_average(list(states.values()), sizes)
    if out is not None:
        RunDir(out).save_global(r, new_global)
    return {"global": new_global, "clients": states, "steps": steps, "images": n_images, "train_seconds": train_seconds}


def reference_rounds(cfg: RunConfig, ds: Dataset, part, out: Path, device: torch.device, workers: int,
                     epochs: int, official_evals: bool = True, say=None) -> list[dict]:
    random.seed(cfg.seed)
    model = init_model(cfg, ds)
    global_state = {n: v.clone() for n, v in model.state_dict().items()}
    a = hwc_arrays(ds)  # once, outside the timed rounds (the official code loads it once too)
    rounds = []
    for r in range(1, cfg.rounds + 1):
        t0 = time.perf_counter()
        res = reference_round(cfg, ds, part, model, global_state, r, device, workers, epochs, out, official_evals, a,
                              say)
        global_state = res["global"]
        model.load_state_dict(global_state)
        if official_evals:  # the official round also measures the global model on the whole training set
            ref.evaluate_reference(model, a["train"], a["train_y"], ds.mean, ds.std, device, workers=workers,
                                   transform=ref.OfficialTransform(cfg.augment, ds.mean, ds.std))
        acc = ref.evaluate_reference(model, a["test"], a["test_y"], ds.mean, ds.std, device, workers=workers)
        if device.type == "cuda":
            torch.cuda.synchronize()
        rounds.append({"round": r, "seconds": time.perf_counter() - t0, "images": res["images"],
                       "steps": sum(res["steps"].values()), "test_acc": acc, "train_seconds": res["train_seconds"]})
    return rounds
