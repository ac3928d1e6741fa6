"""``bench``'s measurements of one model as text (``collapse-lab bench`` prints it)."""
from __future__ import annotations


def _spread(d: dict, fmt: str = ".1f") -> str:
    return f"median {d['median']:{fmt}} (min {d['min']:{fmt}}, max {d['max']:{fmt}}, n={len(d['values'])})"


def text(r: dict) -> str:
    """One model's measurements as the command prints them."""
    f, e = r["fast"], r["extraction"]
    lines = []
    out = lines.append
    out(f"{r['model']} on {r['device']} ({r['device_name']}), preset {r['preset']}, augment {r['resolved']['augment']}, "
        f"precision {r['resolved']['precision']}, {r['repeats']} alternating repeat(s)")
    out(f"  fast path : ({r['resolved']['precision']}) {f['images_per_second']:10.1f} images/s  {f['seconds_per_round']:8.2f} s/round "
        f"({f['images_per_round']:.0f} images, {f['steps_per_round']:.0f} steps; first round {f['first_round_seconds']:.2f} s"
          + (f", {f['first_round_prepare_seconds']:.2f} s of it making step programs"
             if f.get("first_round_prepare_seconds") is not None else "") + ")")
    out(f"              images/s {_spread(f['images_per_second_spread'])}")
    ft = f["features"]
    n = ft["parallel_clients"]
    if n and ft["cuda_graphs"]:
        out(f"              {n} client(s) at once on CUDA graphs")
    elif n > 1:
        out(f"              {n} clients at once, each in its own thread at {max(1, r['torch_threads'] // n)} "
            "intra-op thread(s)")
    if "reference" in r:
        g = r["reference"]
        out(f"  reference : {g['images_per_second']:10.1f} images/s  {g['seconds_per_round']:8.2f} s/round "
            f"({g['images_per_round']:.0f} images, {g['steps_per_round']:.0f} steps, {g['local_epochs']} local epoch(s), "
            f"{g['workers']} workers, official evaluations {'on' if g['official_evals'] else 'off'}, fp32 as the "
            "released code)")
        out(f"              images/s {_spread(g['images_per_second_spread'])}")
        if "extrapolated_epochs_factor" in g:
            out(f"              (per-round figures scale the measured local training x{g['extrapolated_epochs_factor']:g} "
                f"to the fast path's epochs; measured {g['measured_seconds_per_round']:.2f} s for "
                f"{g['measured_images_per_round']:.0f} images)")
        out(f"              {g['train_images_per_second']:10.1f} images/s in local training alone")
        out(f"  ratio     : {_spread(r['ratio'], '.2f')} x images/s per round; "
            f"{_spread(r['ratio_vs_reference_training_only'], '.2f')} x against the reference's local training alone")
    out(f"  features  : {e['images_per_second']:10.1f} images/s float64; extraction + spectrum of {e['images']} images "
        f"{e['total_seconds']:.2f} s")
    return "\n".join(lines)
