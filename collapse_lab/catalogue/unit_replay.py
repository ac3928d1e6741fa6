"""Why representation units die in local training (``collapse-lab units``; docs/scale.md
"Dead units").

Replays client K's local training of round R from the stored global model of round R - 1,
with the run's model, data, learning rate, momentum, weight decay, batch size, local
epochs and regularizer (Eq. 9: CE + beta R(z)), and beside it the same replay without the
regularizer (beta = 0; the same batches in the same order). Per epoch it reports the mean
CE and beta R, the gradient norm each of them sends into every layer's weights, the
per-unit gradient each sends into z (the representation), and the units of z with no
variance over the client's images (dead, ``spectra.rank``) at the end of the epoch. The replay leaves out
the run's data augmentation (its images are read as stored) and any method's hooks
(FedProx, MOON, ...): a diagnostic of the regularizer, not a copy of the run.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ..errors import CollapseLabError
from ..spectra.rank import dead_mask


def layer_of(name: str) -> str:
    """A parameter's layer: its module path (``head.0.weight`` -> ``head.0``)."""
    return name.rsplit(".", 1)[0]


def unit_grad_norms(g: torch.Tensor) -> torch.Tensor:
    """Per unit (column) the norm of a batch's gradient with respect to z."""
    return g.pow(2).sum(0).sqrt()


def representation(model, x, to_float) -> torch.Tensor:
    """z of every row of x in evaluation mode (``features.extract_features``, float32, the
    replay's dtype), the model left in training mode for the steps that follow."""
    from ..analysis.features.extract import extract_features

    z = extract_features(model, x, to_float, torch.float32)
    model.train()
    return z


def replay(model, x, y, to_float, reg, beta: float, lr: float, momentum: float, weight_decay: float,
           batch_size: int, epochs: int, seed: int) -> list[dict]:
    """Local training of ``model`` on (x, y), per epoch the quantities of the module docstring."""
    from ..training.local import batches

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum, weight_decay=weight_decay)
    names = [n for n, _ in model.named_parameters()]
    params = [p for _, p in model.named_parameters()]
    gen = torch.Generator().manual_seed(seed)
    was_dead = dead_mask(representation(model, x, to_float))
    out = [{"epoch": 0, "dead": int(was_dead.sum())}]
    for ep in range(1, epochs + 1):
        acc = {"ce": 0.0, "reg": 0.0, "steps": 0, "layers": {}, "z_ce": 0.0, "z_reg": 0.0,
               "u_ce": torch.zeros(was_dead.shape), "u_reg": torch.zeros(was_dead.shape)}
        model.train()
        for b in batches(len(x), batch_size, gen):
            logits, z = model(to_float(x[b], torch.float32))
            ce = F.cross_entropy(logits, y[b])
            r = beta * reg(z) if reg is not None and beta else z.sum() * 0.0
            g_ce = torch.autograd.grad(ce, params + [z], retain_graph=True, allow_unused=True)
            g_r = torch.autograd.grad(r, params + [z], retain_graph=True, allow_unused=True)
            for n, a, c in zip(names, g_ce, g_r):
                row = acc["layers"].setdefault(layer_of(n), [0.0, 0.0])
                row[0] += 0.0 if a is None else float(a.pow(2).sum())
                row[1] += 0.0 if c is None else float(c.pow(2).sum())
            for key, g in (("u_ce", g_ce[-1]), ("u_reg", g_r[-1])):
                if g is not None:
                    acc[key] += unit_grad_norms(g.detach())
            live = ~dead_mask(z.detach())
            if bool(live.any()):
                acc["z_ce"] += float(unit_grad_norms(g_ce[-1])[live].median()) if g_ce[-1] is not None else 0.0
                acc["z_reg"] += float(unit_grad_norms(g_r[-1])[live].median()) if g_r[-1] is not None else 0.0
            opt.zero_grad(set_to_none=True)
            (ce + r).backward()
            opt.step()
            acc["ce"] += float(ce.detach())
            acc["reg"] += float(r.detach())
            acc["steps"] += 1
        n = max(acc["steps"], 1)
        now_dead = dead_mask(representation(model, x, to_float))
        died, alive = now_dead & ~was_dead, ~now_dead
        was_dead = now_dead
        out.append({"died": int(died.sum()), **{
            f"{who}_unit_grad_{k}": float(acc[f"u_{k}"][m].mean() / n) if bool(m.any()) else None
            for who, m in (("dying", died), ("alive", alive)) for k in ("ce", "reg")},"epoch": ep, "ce": acc["ce"] / n, "beta_reg": acc["reg"] / n,
                    "layers": {k: {"grad_ce": (v[0] / n) ** 0.5, "grad_reg": (v[1] / n) ** 0.5}
                               for k, v in acc["layers"].items()},
                    "z_unit_grad_ce": acc["z_ce"] / n, "z_unit_grad_reg": acc["z_reg"] / n,
                    "dead": int(now_dead.sum())})
    return out


def trace(run, r: int, client: int, epochs: int | None, data_root: str | None) -> dict:
    """Client ``client``'s local training of round ``r`` replayed with and without the run's
    regularizer (module docstring)."""
    from ..analysis.features import FeatureSource
    from ..models import build_model, builder
    from ..store import retention
    from ..regularizers import build_regularizer

    cfg = run.config
    if cfg.reg == "none" or not cfg.beta:
        raise CollapseLabError(f"--run {run.path.name}: trained without a regularizer (reg {cfg.reg}, beta {cfg.beta}), so "
                               "both replays would be one; give a run trained with --reg (e.g. feddecorr)")
    if not 1 <= r <= int(run.meta.get("rounds_complete", 0)):
        raise CollapseLabError(f"--round {r}: the run has rounds 1..{run.meta.get('rounds_complete', 0)}")
    part = run.partition()
    if not 0 <= client < part.num_clients:
        raise CollapseLabError(f"--client {client}: the run has clients 0..{part.num_clients - 1}")
    ds, _ = FeatureSource(split="train", data_root=data_root).dataset(cfg)
    idx = torch.as_tensor(part.client_indices[client], dtype=torch.long)
    x, y = ds.train_x[idx], ds.train_y[idx]
    with retention.read_lock(run.path):
        kept = [q + 1 for q in run.rounds_on_disk() if run.has_global(q) and q + 1 <= run.meta.get("rounds_complete", 0)]
        retention.check_readable_round(run, r - 1, None, f"units replays round R from round R - 1's global model: "
                                                         f"choose --round among {kept or 'none'}")
        start = build_model(builder(cfg.model, cfg.model_revision), ds.num_classes, ds.input_shape)
        start.load_state_dict(run.load_state(r - 1, None, start, extra_ok=True))
    state = {k: v.clone() for k, v in start.state_dict().items()}
    reg = build_regularizer(cfg.reg, ds.num_classes, **cfg.reg_options)
    out = {"run": run.path.name, "round": r, "client": client, "images": len(idx), "reg": cfg.reg,
           "reg_options": cfg.reg_options, "beta": cfg.beta, "units": int(start.feature_dim)}
    for label, beta in (("with", cfg.beta), ("without", 0.0)):
        torch.manual_seed(cfg.seed)
        start.load_state_dict(state)
        out[label] = replay(start, x, y, ds.to_float, reg, beta, cfg.lr, cfg.momentum, cfg.weight_decay,
                            cfg.batch_size, epochs or cfg.local_epochs, seed=cfg.seed * 1000 + client)
    return out
