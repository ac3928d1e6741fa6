"""The numbers blocks of docs/scale.md that the confirmatory protocol defines
(docs/scale/protocol-confirmatory.md), printed from the committed evidence alone:

- ``confirm``: sample c's 15 verdicts (nothing before all 36 runs are in);
- ``exploratory``: the same forms on samples a and b, whose data the earlier rules saw;
- ``draws``: the correlation of per-seed deviations between samples (new draws or not);
- ``slopes``: each setting's accuracy slope over rounds 21-30 and its residual noise.

``record()`` writes docs/scale/c/confirmatory.json (the confirm block's numbers and the
protocol's commit). Imported by scale_numbers.py, whose --write/--check cover these blocks.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCALE = ROOT / "docs" / "scale"
PROTOCOL = "docs/scale/protocol-confirmatory.md"
RUNG = "n300-e10-bn-lr0.01-s6-r30"
ENTRIES = ("feddecorr-fig2", "feddecorr-fig3")


def _regime(sample: str) -> dict:
    out = {}
    for e in ENTRIES:
        p = SCALE / sample / "records" / f"{RUNG}--{e}.json"
        out[e] = json.loads(p.read_text())["regime"].get("matched") if p.is_file() else None
    return out


def _complete(sample: str) -> bool:
    from collapse_lab.judging.confirm import RUNS

    return len(list((SCALE / sample / "records" / "runs").glob("*-r30.json"))) >= RUNS and all(
        (SCALE / sample / "records" / f"{RUNG}--{e}.json").is_file() for e in ENTRIES)


def _family(sample: str, label: str) -> dict:
    from collapse_lab.judging.confirm import family

    return family(SCALE / sample, _regime(sample), label)


def _g(x: float) -> str:
    return f"{x:.4g}"


def _p(x: float) -> str:
    return f"{x:.2g}"


def _sentence(c: dict) -> str:
    eff = f"{_g(c['effect'])} [{_g(c['low'])}, {_g(c['high'])}]"
    return (f"- **{c['id']}** — {c['claim']}: **{c['word']}** on unseen images with new seeds "
            f"({c['test']}; effect {eff}; Holm-adjusted p {_p(c['p_plus_holm'])} for the claim, "
            f"{_p(c['p_minus_holm'])} against it; 6 seeds, n300-e10-bn-lr0.01-s6-r30).")


def confirm() -> str:
    """Sample c's table and one quotable sentence per claim; until all 36 runs and the rung's
    records are in, a line that says so (the protocol's rule) and no number."""
    if not _complete("c"):
        return ("Not computed yet: the protocol computes no verdict before all 36 runs of sample c and the "
                "rung's records are committed (docs/scale/c/records/).")
    f = _family("c", "confirmatory")
    lines = [f"Sample c (`cifar10-subset-c`), seeds 1000-1005, {RUNG}; regime: "
             + ", ".join(f"{e} {'matched' if m else 'not matched'}" for e, m in _regime("c").items())
             + f"; family of {f['family']}, Holm at {f['level']} in each direction; protocol {protocol_commit()[:7]}.",
             "", "| id | claim | form | test | verdict | effect [95 %] | p+ (Holm) | p- (Holm) |", "|---|---|---|---|---|---|---|---|"]
    for c in f["claims"]:
        lines.append(f"| {c['id']} | {c['claim']} | {c['form']} | {c['test']} | **{c['word']}** | {_g(c['effect'])} "
                     f"[{_g(c['low'])}, {_g(c['high'])}] | {_p(c['p_plus'])} ({_p(c['p_plus_holm'])}) | "
                     f"{_p(c['p_minus'])} ({_p(c['p_minus_holm'])}) |")
    return "\n".join(lines + [""] + [_sentence(c) for c in f["claims"]])


def exploratory() -> str:
    """The protocol's 15 forms on samples a and b (seeds 0-5 on both: one draw of partitions
    and weights seen on two image samples), each sample its own family."""
    fa, fb = _family("a", "exploratory"), _family("b", "exploratory")
    lines = ["| id | claim | sample a: verdict | effect [95 %], p+ (Holm) | sample b: verdict | effect [95 %], p+ (Holm) |",
             "|---|---|---|---|---|---|"]
    for a, b in zip(fa["claims"], fb["claims"]):
        cell = lambda c: (f"{c['word']} | {_g(c['effect'])} [{_g(c['low'])}, {_g(c['high'])}], "  # noqa: E731
                          f"{_p(c['p_plus_holm'])}")
        lines.append(f"| {a['id']} | {a['claim']} | {cell(a)} | {cell(b)} |")
    return "\n".join(lines)


def draws() -> str:
    """Pearson's r of per-seed deviations (a run's value minus its setting's seed mean)
    between two samples' runs of the rung, the i-th seed of one paired with the i-th of the
    other: a and b (the same seeds), and c and a once c is complete."""
    from collapse_lab.judging.confirm import deviation_correlation

    keys = (("er_global", "global effective rank"), ("er_client0", "client-0 effective rank"), ("acc", "accuracy"))
    pairs = [("a", "b", "the same seeds 0-5")] + ([("c", "a", "seeds 1000-1005 against 0-5")] if _complete("c") else [])
    lines = ["| samples | seeds | " + " | ".join(k[1] for k in keys) + " |", "|---|---|" + "---|" * len(keys)]
    for x, y, how in pairs:
        rs = [deviation_correlation(SCALE / x, SCALE / y, k) for k, _ in keys]
        lines.append(f"| {x} vs {y} | {how} | " + " | ".join(f"{r:+.2f}" for r in rs) + " |")
    if not _complete("c"):
        lines.append("| c vs a | seeds 1000-1005 against 0-5 | not computed before all of c's runs are in | | |")
    return "\n".join(lines)


def slopes() -> str:
    """Per sample and setting: the seed-mean accuracy slope over rounds 21-30 (points a round)
    with its one-sided 95 % upper bound, the residual noise about each run's line, and the
    share of flat curves the slope rule passes at that noise (20,000 simulated settings)."""
    from collapse_lab.judging.plateau import noise_from_curves, plateau, simulate

    lines = ["| sample | setting | slope, points a round [upper 95 %] | residual sigma | a flat curve passes |",
             "|---|---|---|---|---|"]
    for sample in ("a", "b"):
        by: dict[str, dict] = {}
        for e in ENTRIES:
            for m in json.loads((SCALE / sample / "records" / f"{RUNG}--{e}.json").read_text())["regime"]["runs"]:
                key = f"alpha {m['alpha']}" + (" + FedDecorr" if m["reg"] != "none" else "")
                by.setdefault(key, {})[m["run"]] = m["acc_curve"]
        for key, runs in by.items():
            curves = list(runs.values())
            p, noise = plateau(curves), noise_from_curves(curves, 10)["sigma"]
            flat = simulate(noise, 30, len(curves), 0.0)["passes"]
            lines.append(f"| {sample} | {key} | {p['slope_mean']:+.3f} [{p['slope_upper']:+.3f}] | {noise:.2f} | "
                         f"{100 * flat:.1f} % |")
    return "\n".join(lines)


def protocol_commit() -> str:
    return subprocess.run(["git", "log", "-1", "--format=%H", "--", PROTOCOL], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout.strip()


def record() -> Path | None:
    """docs/scale/c/confirmatory.json, once sample c is complete (else None)."""
    if not _complete("c"):
        return None
    from collapse_lab.files import write_bytes

    f = _family("c", "confirmatory")
    out = SCALE / "c" / "confirmatory.json"
    write_bytes(out, (json.dumps({**f, "protocol": PROTOCOL, "protocol_commit": protocol_commit(),
                                  "sample": "cifar10-subset-c", "seeds": list(range(1000, 1006))},
                                 indent=1, sort_keys=True) + "\n").encode())
    return out


BLOCKS = {"confirm": confirm, "exploratory": exploratory, "draws": draws, "slopes": slopes}
