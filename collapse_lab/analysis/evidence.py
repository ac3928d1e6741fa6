"""A ladder record's evidence: what each run's numbers come from, kept so that every measure,
rule and verdict is recomputed from the records alone (docs/scale.md, amendment of
2026-11-28).

Per run the record keeps (``run_evidence``) the global test accuracy of every round, the
final spectra (every singular value of the covariance, descending, float64, and its
numerical floor) of the global model and of client 0's local model, beside the regime
measures (own-data accuracy, dead units). ``spectra_values`` and ``local_global_values``
rebuild the values a ``spectra`` entry (ICLR Fig. 2, 3) or a ``local_global`` entry (journal
Fig. 4, 6: R, Eq. 1) computes from a store, for all seeds or one, curves included on request;
``claims`` checks the entry's claims over seeds (``judging.seeds.over_seeds``).
"""
from __future__ import annotations

import json

import torch

from ..config import alpha_str, parse_alpha
from ..spectra.functional import DEFAULT_TAU, n_relative
from ..spectra.measures import Inputs, value

FORMAT = 2  # a record with evidence; format 1 records keep their verdicts only
SENSITIVITY = (1e-1, 1e-2, 1e-3)  # sigma_k / sigma_1 thresholds printed beside the claims


def run_evidence(ctx, run, r: int, curve: dict[int, float]) -> dict:
    """The evidence of one run at round ``r``: its accuracy curve (points, rounds 1..r; None
    where a round has none) and the spectra of the global and client-0 models (``ctx``: the
    analysis context that reads the run's features)."""
    out = {"acc_curve": [None if q not in curve else round(100.0 * curve[q], 6) for q in range(1, r + 1)],
           **({"classes": int(run.meta["num_classes"])} if run.meta.get("num_classes") else {})}
    for name, client in (("global", None), ("client0", 0)):
        sv, floor = ctx.spectrum(run, r, client)
        out[f"spectrum_{name}"] = [float(x) for x in sv.to(torch.float64)]
        out[f"floor_{name}"] = float(floor)
    return out


def _key(m: dict) -> dict:
    d = json.loads(m["setting"])
    d["alpha"] = alpha_str(parse_alpha(d["alpha"]))
    return d


def _hit(key: dict, where: dict | None) -> bool:
    return all(alpha_str(parse_alpha(key.get(k))) == alpha_str(parse_alpha(v)) if k == "alpha" else str(key.get(k)) == str(v)
               for k, v in (where or {}).items())


def _label(key: dict) -> str:
    reg = key.get("reg", "none")
    return f"α = {key['alpha']}" + ("" if reg in (None, "none") else f" +{reg}")


def _group_keys(keys: list[dict], every: list[dict]) -> list[dict]:
    """These settings as a render from the store keys their groups: the fields that vary
    over the entry's runs ``every`` (``select.varying``), in the identity's order."""
    from ..config import MOVED_FIELDS, RunConfig
    from .select import SEED_KEYS

    order = [k for k in RunConfig().identity() if k not in SEED_KEYS]
    fields = [k for k in order if len({repr(d.get(k)) for d in every
                                       if MOVED_FIELDS.get(k, d.get("reg")) == d.get("reg")}) > 1]
    return [{k: d.get(k) for k in fields} for d in keys]


def _legend(keys: list[dict], every: list[dict]) -> list[str]:
    """The legend labels a render from the store gives these settings within one panel
    (``select.panel_labels``)."""
    from types import SimpleNamespace

    from ..labels import label
    from .select import panel_labels

    return panel_labels([SimpleNamespace(key=k, label=label(k)) for k in _group_keys(keys, every)])


def _panel_groups(panel: dict, runs: list[dict], seed: int | None = None) -> tuple[str, dict[str, list[dict]]]:
    """The spectrum a panel reads (``global`` or ``client<k>``) and its runs by setting."""
    which = "global" if panel.get("model", "global") == "global" else f"client{panel.get('client', 0)}"
    groups: dict[str, list[dict]] = {}
    for m in runs:
        if (seed is None or m["seed"] == seed) and _hit(_key(m), panel.get("where")):
            groups.setdefault(m["setting"], []).append(m)
    return which, groups


def spectra_values(params: dict, runs: list[dict], seed: int | None = None, curves: bool = False) -> dict:
    """The values of a ``spectra`` entry (``renderers/spectra.py``'s shape; ``curves``: with
    each series' curve, the mean and std over seeds of log10 sigma_k, as the renderer draws
    it) from the runs' evidence: per panel one series per setting, each measure the mean
    over the setting's seeds (``seed``: that seed's run alone)."""
    top, tau = int(params.get("top", 100)), float(params.get("tau", DEFAULT_TAU))
    from ..spectra.functional import log10_mean_std
    from .renderers.spectra import CLAIMED

    panels, every = [], [_key(m) for m in runs]
    for panel in params.get("panels", [{"title": "global model"}]):
        which, groups = _panel_groups(panel, runs, seed)
        legend, series = _legend([_key(ms[0]) for ms in groups.values()], every), []
        for setting, ms in groups.items():
            per = {name: [] for name in CLAIMED}
            for m in ms:
                sv = torch.tensor(m[f"spectrum_{which}"], dtype=torch.float64)
                for name in CLAIMED:
                    per[name].append(value(name, Inputs(sv, m[f"floor_{which}"], tau, top)))
            k = min(top, *(len(m[f"spectrum_{which}"]) for m in ms))
            key = _key(ms[0])
            classes = {m.get("classes") for m in ms}  # kept since evidence names them; older evidence has none
            series.append({"label": legend[len(series)], "key": key, "n": len(ms),
                           "metrics": {**{n: sum(v) / len(v) for n, v in per.items()}, "top": k,
                                       **({"classes": classes.pop()} if len(classes) == 1 and None not in classes
                                          else {})}})
            if curves:
                svs = [torch.tensor(m[f"spectrum_{which}"], dtype=torch.float64) for m in ms]
                mean, std = log10_mean_std(svs, [m[f"floor_{which}"] for m in ms], k)
                series[-1].update({"x": list(range(1, k + 1)), "y": mean.tolist(),
                                   "y_std": std.tolist() if len(ms) > 1 else None, "runs": [m["run"] for m in ms]})
        panels.append({"title": panel.get("title", ""), "tau": tau, "series": series})
    return {"panels": panels}


def local_global_values(params: dict, runs: list[dict], seed: int | None = None, curves: bool = False) -> dict:
    """The values of a ``local_global`` entry (``renderers/local_global.py``'s shape: a panel
    per configuration with R_top, R_floor and below_share, the seed means, then the summary
    panel; ``curves``: with the local and global curves) from the runs' evidence, which
    keeps client 0's local spectrum and the global one."""
    from ..errors import CollapseLabError
    from ..spectra.functional import log10_mean_std
    from ..labels import label

    top, client = int(params.get("top", 100)), int(params.get("client", 0))
    if client != 0:
        raise CollapseLabError(f"the evidence keeps client 0's local spectrum, not client {client}'s")
    every, panels, summary = [_key(m) for m in runs], [], []
    for spec in params["panels"]:
        _, groups = _panel_groups({"where": spec.get("where")}, runs, seed)
        keys = _group_keys([_key(ms[0]) for ms in groups.values()], every)
        for key, ms in zip(keys, groups.values()):
            pairs = {name: [(torch.tensor(m[f"spectrum_{name}"], dtype=torch.float64), m[f"floor_{name}"])
                            for m in ms] for name in ("client0", "global")}
            per = {n: [value(n, Inputs(sl, fl, top=top, other=sg, other_floor=fg))
                       for (sl, fl), (sg, fg) in zip(pairs["client0"], pairs["global"])]
                   for n in ("R_top", "R_floor", "below_share")}
            k = min(top, *(len(s) for s, _ in pairs["client0"] + pairs["global"]))
            metrics = {**{n: float(sum(v) / len(v)) for n, v in per.items()}, "top": k}
            series = []
            for name, which in ((f"local (client {client})", "client0"), ("global", "global")):
                s = {"label": name, "key": {**key, "model": name}, "n": len(ms), "metrics": {}}
                if curves:
                    mean, std = log10_mean_std([sv for sv, _ in pairs[which]], [f for _, f in pairs[which]], k)
                    s.update({"x": list(range(1, k + 1)), "y": mean.tolist(),
                              "y_std": std.tolist() if len(ms) > 1 else None})
                series.append(s)
            panels.append({"title": spec.get("title", label(key)).format(label=label(key)), "series": series,
                           "metrics": metrics, "runs": [m["run"] for m in ms]})
            summary.append({"label": label(key), "key": key, "x": [], "y": [], "y_std": None, "n": len(ms),
                            "metrics": metrics})
    panels.append({"title": "summary", "series": summary, "draw": False})
    return {"panels": panels}


def _methods_values(params: dict, runs: list[dict], seed: int | None = None, curves: bool = False) -> dict:
    from ..judging.arms import methods_values

    return methods_values(params, runs, seed, curves)


# the renderers evidence can stand for
VALUES = {"spectra": spectra_values, "local_global": local_global_values, "methods": _methods_values}


def values_of(entry, runs: list[dict], seed: int | None = None, curves: bool = False) -> dict:
    """The entry's values from its runs' evidence (``VALUES`` by its renderer)."""
    from ..errors import CollapseLabError

    if entry.renderer not in VALUES:
        raise CollapseLabError(f"{entry.name}: its {entry.renderer} values are computed from the store only")
    return VALUES[entry.renderer](entry.params, runs, seed, curves)


def claims(entry, runs: list[dict], matched: bool | None = None) -> list[dict]:
    """The entry's claims over the seeds of ``runs`` (their evidence), as ``figures`` checks
    them on a store: on the seed means and on each seed, then ``over_seeds``; a renderer
    that judges its own family of claims (``judged``) adds them, each with its regime word
    (``matched``: the rung's regime, None where unknown)."""
    from . import RENDERERS
    from ..judging.claims import evaluate_safely
    from ..judging.seeds import over_seeds

    seeds = sorted({m["seed"] for m in runs})
    means = values_of(entry, runs)
    per = {s: values_of(entry, runs, s) for s in seeds} if entry.claims else {}
    out = []
    for spec in entry.claims:
        on_means = evaluate_safely(spec, means)
        out.append(over_seeds(on_means, [(s, evaluate_safely(spec, per[s])) for s in seeds]) if len(seeds) > 1
                   else on_means)
    judge = getattr(RENDERERS.get(entry.renderer), "judged", None)
    return out + (judge(means, matched) if judge else [])


def sensitivity(params: dict, runs: list[dict]) -> list[dict]:
    """Per panel and setting, the seed-mean count of sigma_k / sigma_1 above each of
    ``SENSITIVITY`` among the top k: how the scale-free count moves with its threshold."""
    top = int(params.get("top", 100))
    out = []
    for panel in params.get("panels", [{"title": "global model"}]):
        which, groups = _panel_groups(panel, runs)
        for setting, ms in groups.items():
            counts = {f"{rho:g}": sum(n_relative(torch.tensor(m[f"spectrum_{which}"][:top], dtype=torch.float64), rho)
                                      for m in ms) / len(ms) for rho in SENSITIVITY}
            out.append({"panel": panel.get("title", ""), "series": _label(_key(ms[0])), "seeds": len(ms),
                        "n_relative_top": counts})
    return out
