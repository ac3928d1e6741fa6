"""Every number docs/scale.md and its journal (docs/scale-journal.md) quote from the ladder,
printed from the committed records (docs/scale/a, b and c): ``python docs/scale_numbers.py
[BLOCK ...]`` prints the blocks that stand in the pages between ``<!-- numbers:NAME -->`` and
``<!-- /numbers -->`` (the confirmatory ones from scale_confirm.py); ``--check`` says which
blocks differ from their page (tests/test_docs_numbers.py runs it); ``--write`` rewrites both
pages' blocks from the records, and sample c's confirmatory.json once its runs are all in.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCALE = HERE / "scale"
PAGES = (HERE / "scale.md", HERE / "scale-journal.md")  # the findings, then the history


def records(sample: str) -> list[dict]:
    return [r for r in json.loads((SCALE / sample / "ladder.json").read_text())["records"] if "claims" in r]


def _seeds(rec: dict) -> int:
    return len({m["seed"] for m in rec["regime"]["runs"]})


def summary() -> str:
    """Claim x form: the verdict at the best rung (the most samples, then the most seeds, then
    a matched regime, then the later rung), with its deciding effect, seeds and samples."""
    from collapse_lab.analysis.ladder import claims_of
    from collapse_lab.judging.ladder import effect_text, word
    from collapse_lab.judging.verdict import OPEN

    a, b = records("a"), records("b")
    order = {(r["rung"], r["entry"]): i for i, r in enumerate(a)}
    other = {(r["rung"], r["entry"]): r for r in b}
    best: dict[tuple, tuple] = {}
    for r in a:
        o = other.get((r["rung"], r["entry"]))
        mine, theirs = claims_of(r), claims_of(o) if o else []
        for i, c in enumerate(mine):
            matched = r["regime"].get("matched")
            w = word(c, matched)
            if theirs:
                wb = word(theirs[i], o["regime"].get("matched"))
                w = w if w == wb else f"{OPEN} (samples disagree: a {w}, b {wb})"
            rank = (2 if theirs else 1, _seeds(r), bool(matched), order[(r["rung"], r["entry"])])
            key = (r["entry"], c["text"])
            if key not in best or rank > best[key][0]:
                best[key] = (rank, r["rung"], c.get("form", "literal"), w, effect_text(c), _seeds(r))
    lines = ["| entry | claim | form | verdict at the best rung | deciding effect, mean [95 % interval] (sample a) "
             "| rung | seeds | samples |", "|---|---|---|---|---|---|---|---|"]
    for (entry, text), (rank, rung, form, w, eff, n) in best.items():
        lines.append(f"| {entry} | {text} | {form} | {w} | {eff} | {rung} | {n} | {'a, b' if rank[0] == 2 else 'a'} |")
    from collapse_lab.analysis.catalogue import pick

    for e in pick(["feddecorr-fig2", "feddecorr-fig3"], "figure"):  # forms no record computes yet
        for c in e.claims:
            if (e.name, c["text"]) not in best:
                lines.append(f"| {e.name} | {c['text']} | {c.get('form', 'literal')} | no record keeps the evidence "
                             "yet | | | | |")
    return "\n".join(lines)


def plateau() -> str:
    """The slope rule's power at the noise the BatchNorm rungs' records imply (as the amendment
    of 2026-11-28 states it)."""
    from collapse_lab.judging.plateau import noise_from_changes, simulate

    def sigma(rungs: list[str]) -> float:
        changes, seen = [], set()
        for rung in rungs:
            for entry in ("feddecorr-fig2", "feddecorr-fig3"):
                rec = json.loads((SCALE / "a" / "records" / f"{rung}--{entry}.json").read_text())
                by: dict[str, list] = {}
                for m in rec["regime"]["runs"]:
                    if m["run"] not in seen:
                        seen.add(m["run"])
                        by.setdefault(m["setting"], []).append(m["plateau_points"])
                changes += list(by.values())
        return noise_from_changes(changes)

    s10, s30 = sigma(["n300-e10-bn", "n300-e10-bn-lr0.01"]), sigma(["n300-e10-bn-r30"])
    lines = [f"sigma at 10 rounds {s10:.2f}, at round 30 {s30:.2f} points"]
    rows = [(30, 6, s30), (30, 6, s10), (30, 3, s30), (10, 6, s10)]
    measured = _measured_noise()
    if measured:
        lines.append(measured[0])
        rows.insert(0, (30, 6, measured[1]))
    lines += ["", "| R, seeds, sigma | W | flat curve passes (new / old) | rising 0.5 point a round fails (new / old) | "
              "an entry of 4 flat settings passes (new / old) |", "|---|---|---|---|---|"]
    for r, n, s in rows:
        flat, rise = simulate(s, r, n, 0.0), simulate(s, r, n, 0.5)
        lines.append(f"| {r}, {n}, {s:.2f} | {flat['window']} | {100 * flat['passes']:.1f} % / "
                     f"{100 * flat['old_passes']:.1f} % | {100 * (1 - rise['passes']):.1f} % / "
                     f"{100 * (1 - rise['old_passes']):.1f} % | {100 * flat['passes'] ** 4:.1f} % / "
                     f"{100 * flat['old_passes'] ** 4:.1f} % |")
    return "\n".join(lines)


R30 = "n300-e10-bn-lr0.01-s6-r30"


def _measured_noise() -> tuple[str, float] | None:
    """The noise measured on the 30-round six-seed rung's own curves (every run of both its
    entries, on each sample whose records are in): residuals about each run's least-squares
    line over rounds 21-30, pooled; reported after the rule, not a part of it."""
    from collapse_lab.judging.plateau import noise_from_curves

    curves, samples = {}, []
    for sample in ("a", "b"):
        paths = [SCALE / sample / "records" / f"{R30}--{e}.json" for e in ("feddecorr-fig2", "feddecorr-fig3")]
        if not all(p.is_file() for p in paths):
            continue
        samples.append(sample)
        for p in paths:
            for m in json.loads(p.read_text())["regime"]["runs"]:
                curves[(sample, m["run"])] = m["acc_curve"]
    if not curves:
        return None
    import numpy as np

    got = noise_from_curves(list(curves.values()), 10)
    white = noise_from_curves(np.random.default_rng(0).standard_normal((20000, 10)).tolist(), 10)["lag1"]
    return (f"measured on {R30}'s own curves (sample {' and '.join(samples)}, {got['curves']} runs; residuals "
            f"about each run's least-squares line over rounds 21-30, pooled): sigma {got['sigma']:.2f} points, "
            f"the residuals' mean lag-1 autocorrelation {got['lag1']:+.2f} (independent noise gives "
            f"{white:+.2f}: the simulation's assumption)", got["sigma"])


def dead() -> str:
    """Dead units of the final global model at the cpu preset, per regularizer and alpha
    (min-max over seeds), from the cpu rung's fig3 record."""
    rec = json.loads((SCALE / "a" / "records" / "cpu--feddecorr-fig3.json").read_text())
    by: dict[tuple, list] = {}
    for m in rec["regime"]["runs"]:
        by.setdefault((m["reg"], m["alpha"]), []).append(m["dead_units"])
    units = rec["regime"]["runs"][0]["units"]
    return "\n".join(f"- {'FedDecorr' if reg != 'none' else 'FedAvg'} at alpha {alpha}: {min(v)}-{max(v)} of {units} "
                     f"dead ({len(v)} seeds)" for (reg, alpha), v in sorted(by.items()))


def timeline() -> str:
    """The probe's dead units of the global model round by round, in the cpu rung's FedDecorr
    runs at seed 0, retrained (docs/scale/dead_units.py), with the ladder record's own ending."""
    d = json.loads((SCALE / "a" / "dead-units-timeline.json").read_text())
    lines = []
    for run in sorted(d["runs"].values(), key=lambda r: float(r["alpha"])):
        dead = run["probe_dead_units"]
        lines.append(f"- alpha {run['alpha']}, seed 0 (of {run['units']} units, 1,000 test images): {dead[0]} at "
                     f"initialisation, {dead[1]} after round 1, {dead[2]} after round 2, {min(dead[3:])}-{max(dead[3:])} "
                     f"from round 3 on; final test accuracy {100 * run['test_acc_final']:.1f} % (the ladder's cpu "
                     f"record: {100 * run['record_test_acc']:.1f} %, {run['record_dead_units_final']} dead on its "
                     "2,000 test images)")
    return "\n".join(lines)


def units() -> str:
    """``collapse-lab units --json`` of four networks (docs/scale/a/units.json): client 0's
    local training of round 1 replayed with and without FedDecorr."""
    d = json.loads((SCALE / "a" / "units.json").read_text())["networks"]
    names = {"cnn-1000": "CNN, 1,000 a class", "cnn-300": "CNN, 300 a class",
             "cnn-bn-300": "CNN with BatchNorm (`cnn-bn`), 300 a class", "resnet20-300": "ResNet-20, 300 a class"}
    # the last weight layer before z (models/cnn.py, cnn_bn.py: the head's Linear; resnet20.py:
    # the last block's second convolution)
    before_z = {"cnn-1000": "head.0", "cnn-300": "head.0", "cnn-bn-300": "head.0", "resnet20-300": "layers.8.conv2"}
    g = lambda v: "-" if v is None else f"{v:.2g}"  # noqa: E731
    lines = ["| network (images of client 0) | dead units: start -> epoch 1 -> epoch 2, with R | without R | per-unit "
             "gradient into z, epoch 1: CE / beta R (median unit) | units dying in epoch 1: CE / beta R | gradient "
             "into the last layer before z, epoch 1: CE / beta R |", "|---|---|---|---|---|---|"]
    for key, name in names.items():
        o = d[key]
        w, wo = o["with"], o["without"]
        e1 = w[1]
        last = before_z[key]
        lines.append(f"| {name} ({o['images']}) | {' -> '.join(str(e['dead']) for e in w)} of {o['units']} | "
                     f"{' -> '.join(str(e['dead']) for e in wo)} | {g(e1['z_unit_grad_ce'])} / {g(e1['z_unit_grad_reg'])} | "
                     f"{g(e1['dying_unit_grad_ce'])} / {g(e1['dying_unit_grad_reg'])} | {last} "
                     f"{g(e1['layers'][last]['grad_ce'])} / {g(e1['layers'][last]['grad_reg'])} |")
    lines.append("")
    for key, name in names.items():  # the ratios the page's reading quotes
        o = d[key]
        e1, e2 = o["with"][1], o["with"][2]
        dying = (f"; a dying unit's beta R gradient {e1['dying_unit_grad_reg'] / e1['z_unit_grad_reg']:.1f}x the median "
                 f"unit's and {e1['dying_unit_grad_reg'] / e1['dying_unit_grad_ce']:.1f}x its own CE gradient"
                 if e1["dying_unit_grad_reg"] else "")
        lines.append(f"- {name}: beta R {e1['beta_reg']:.3g} -> {e2['beta_reg']:.3g} over the two epochs (CE "
                     f"{e1['ce']:.3g} -> {e2['ce']:.3g}; without R {o['without'][1]['ce']:.3g} -> "
                     f"{o['without'][2]['ce']:.3g}); into z beta R sends {e1['z_unit_grad_reg'] / e1['z_unit_grad_ce']:.2f}x "
                     f"CE's gradient, into {before_z[key]} {e1['layers'][before_z[key]]['grad_reg'] / e1['layers'][before_z[key]]['grad_ce']:.2f}x; "
                     f"{e1['dead'] - o['with'][0]['dead']:+d} dead units in epoch 1 with R, "
                     f"{o['without'][1]['dead'] - o['without'][0]['dead']:+d} without{dying}")
    return "\n".join(lines)


def fmt(xs: list, d: int) -> str:
    """Mean [95 % interval] over seeds (Student t), to d decimals."""
    from collapse_lab.judging.seeds import t_interval

    return "{:.{d}f} [{:.{d}f}, {:.{d}f}]".format(*t_interval(xs), d=d)


def _per_seed(sample: str, rung: str, entry: str = "feddecorr-fig2") -> tuple[dict, dict, list, dict]:
    """A rung's record of one entry, the entry's parameters, its seeds and each seed's spectra values."""
    from collapse_lab.analysis.catalogue import pick
    from collapse_lab.analysis.evidence import spectra_values

    rec = json.loads((SCALE / sample / "records" / f"{rung}--{entry}.json").read_text())
    params = pick([entry], "figure")[0].at(rec["preset"]).params
    runs = rec["regime"]["runs"]
    seeds = sorted({m["seed"] for m in runs})
    per = {s: spectra_values(params, runs, s) for s in seeds}
    return rec, params, seeds, per


def sixseeds(sample: str = "a", rung: str = "n300-e10-bn-lr0.01-s6") -> str:
    """A six-seed rung on one sample: per panel and alpha, each measure's mean [95 % interval]
    over the seeds, the final test accuracy, and the regime (both plateau rules)."""
    rec, params, seeds, per = _per_seed(sample, rung)
    runs = rec["regime"]["runs"]
    names = ("effective_rank", "n_relative_top", "n_significant_top", "tail_share")
    lines = [f"{rung}, sample {sample}, {len(seeds)} seeds, round {max(rec['rounds'])}:", "",
             "| panel | alpha | effective rank | n(sigma_k / sigma_1 > 0.01) | n(sigma_k > 0.01) | tail share of the "
             "trace | final test accuracy (%) |", "|---|---|---|---|---|---|---|"]
    for i, panel in enumerate(params["panels"]):
        for j, series in enumerate(per[seeds[0]]["panels"][i]["series"]):
            alpha = series["key"]["alpha"]
            vals = {n: [per[s]["panels"][i]["series"][j]["metrics"][n] for s in seeds] for n in names}
            acc = [100 * m["test_acc"] for m in runs if m["alpha"] == alpha] if i == 0 else None
            lines.append(f"| {panel['title']} | {alpha} | {fmt(vals['effective_rank'], 1)} | "
                         f"{fmt(vals['n_relative_top'], 1)} | {fmt(vals['n_significant_top'], 0)} | "
                         f"{fmt(vals['tail_share'], 4)} | {fmt(acc, 1) if acc else ''} |")
    how = ("pre-registered: the amendment of 2026-11-28, 15:43 UTC" if (sample, rung) == ("a", "n300-e10-bn-s6")
           else "a post-hoc contrast, not a pre-registered claim")
    lines += ["", f"alpha inf minus alpha 0.01 (Welch over seeds, 95 %; {how}): " + "; ".join(_contrast(params, per, seeds, i, n) for i in range(len(params["panels"]))
                                         for n in ("effective_rank", "n_relative_top")) + "."]
    g = rec["regime"]
    sl = g["plateau_slope"]
    lines += ["", f"Regime (fig2's runs): clients on their own data {100 * g['own_acc_min']:.1f} % (min); plateau, "
                  f"slope rule: {_flat(sl['settings_plateaued'], sl['settings'])}, the steepest "
                  f"{sl['slope_mean_worst']:+.2f} point a round [upper {sl['slope_upper_worst']:.2f}] over the last "
                  f"{sl['window']} rounds; old rule: {g['plateau_max_points']:.2f} points; FedAvg dead units "
                  f"{100 * g['dead_share_max_fedavg']:.1f} %."]
    return "\n".join(lines + _fig3_arms(sample, rung) + _verdicts(sample, rung))


def _fig3_arms(sample: str, rung: str) -> list[str]:
    """Fig. 3's two arms per panel, FedAvg and FedAvg + FedDecorr (seed means [95 %]), so that
    a verdict's compared values are on the page; empty until the rung's fig3 record exists."""
    if not (SCALE / sample / "records" / f"{rung}--feddecorr-fig3.json").is_file():
        return []
    rec, params, seeds, per = _per_seed(sample, rung, "feddecorr-fig3")
    lines = ["", "Fig. 3's arms (fig3's runs), FedAvg / + FedDecorr:", "",
             "| panel | effective rank | n(sigma_k / sigma_1 > 0.01) | tail share of the trace | "
             "final test accuracy (%) |", "|---|---|---|---|---|"]
    for i, panel in enumerate(params["panels"]):
        arms = per[seeds[0]]["panels"][i]["series"]
        order = sorted(range(len(arms)), key=lambda j: arms[j]["key"]["reg"] != "none")  # FedAvg first
        cell = {n: " / ".join(fmt([per[s]["panels"][i]["series"][j]["metrics"][n] for s in seeds], d) for j in order)
                for n, d in (("effective_rank", 1), ("n_relative_top", 1), ("tail_share", 4))}
        acc = ""
        if "global" in panel["title"]:  # a local panel's model is client 0's, not the run's test accuracy
            acc = " / ".join(fmt([100 * m["test_acc"] for m in rec["regime"]["runs"]
                                  if m["alpha"] == arms[j]["key"]["alpha"] and m["reg"] == arms[j]["key"]["reg"]], 1)
                             for j in order)
        lines.append(f"| {panel['title']} | {cell['effective_rank']} | {cell['n_relative_top']} | "
                     f"{cell['tail_share']} | {acc} |")
    return lines


def _flat(k: int, n: int) -> str:
    return f"no setting flat (0 of {n})" if k == 0 else f"every setting flat ({k} of {n})" if k == n \
        else f"{k} of {n} settings flat"


def _contrast(params: dict, per: dict, seeds: list, panel: int, name: str) -> str:
    mean, low, high = _welch_inf_minus(per, seeds, panel, name)
    what = {"effective_rank": "effective rank", "n_relative_top": "n(sigma_k / sigma_1 > 0.01)"}[name]
    return f"{params['panels'][panel]['title']} {what} {mean:+.1f} [{low:+.1f}, {high:+.1f}]"


def _verdicts(sample: str, rung: str) -> list[str]:
    """Each claim of the rung's records in each form: its verdict (the regime said) and its
    deciding effect."""
    from collapse_lab.analysis.ladder import claims_of
    from collapse_lab.judging.ladder import effect_text, word

    lines = ["", "| entry | claim | form | verdict | deciding effect, mean [95 % interval] |", "|---|---|---|---|---|"]
    for entry in ("feddecorr-fig2", "feddecorr-fig3"):
        path = SCALE / sample / "records" / f"{rung}--{entry}.json"
        if not path.is_file():
            continue
        rec = json.loads(path.read_text())
        for c in claims_of(rec):
            lines.append(f"| {entry} | {c['text']} | {c.get('form', 'literal')} | "
                         f"{word(c, rec['regime'].get('matched'))} | {effect_text(c)} |")
    return lines


def both(rung: str) -> str:
    """A rung's claims on the two samples side by side, each with its regime said, and the
    ladder's verdict (``ladder.across_samples``: the same word where they agree, else not
    resolved), with sample a's and b's deciding effects."""
    from collapse_lab.analysis.ladder import across_samples, claims_of
    from collapse_lab.judging.ladder import effect_text

    paths = {s: {p.name: p for p in (SCALE / s / "records").glob(f"{rung}--*.json")} for s in ("a", "b")}
    on_both = sorted(set(paths["a"]) & set(paths["b"]))  # the entries whose records both samples have
    recs = {s: [json.loads(paths[s][n].read_text()) for n in on_both] for s in ("a", "b")}
    effects = {s: {(r["entry"], c["text"]): (effect_text(c), c.get("form", "literal")) for r in recs[s]
                   for c in claims_of(r)} for s in recs}
    lines = [f"{rung}: sample a / sample b, {', '.join(sorted({r['entry'] for r in recs['a']}))}", "",
             "| entry | claim | form | sample a | sample b | verdict (both samples) | effect a | effect b |",
             "|---|---|---|---|---|---|---|---|"]
    for row in across_samples(recs["a"], recs["b"]):
        key = (row["entry"], row["text"])
        (ea, form), (eb, _) = effects["a"][key], effects["b"][key]
        v = row["verdict"] if row["agree"] else f"{row['verdict']} (the samples disagree)"
        lines.append(f"| {row['entry']} | {row['text']} | {form} | {row['a']} | {row['b']} | **{v}** | {ea} | {eb} |")
    lines.append("")
    for s in ("a", "b"):
        for r in recs[s]:
            g, sl = r["regime"], r["regime"]["plateau_slope"]
            lines.append(f"- regime, sample {s}, {r['entry']}: clients "
                         f"on their own data {100 * g['own_acc_min']:.1f} % (min); slope rule "
                         f"{_flat(sl['settings_plateaued'], sl['settings'])}, the steepest {sl['slope_mean_worst']:+.2f} "
                         f"point a round [upper {sl['slope_upper_worst']:.2f}]; old rule {g['plateau_max_points']:.2f} "
                         f"points; FedAvg dead units {100 * g['dead_share_max_fedavg']:.1f} % -> "
                         f"{'matched' if g.get('matched') else 'not matched'}")
    return "\n".join(lines)


def endpoint(sample: str = "a", rung: str = "n300-e10-bn-s6") -> str:
    """The amendment of 2026-11-28 (15:43 UTC): alpha inf minus alpha 0.01 at round 10, Welch
    over seeds; the primary (global effective rank) decides, the rest is reported."""
    rec, params, seeds, per = _per_seed(sample, rung)
    mean, low, high = _welch_inf_minus(per, seeds, 0, "effective_rank")
    word = "holds" if low > 0 else "refuted" if high < 0 else "not resolved at this scale"
    if rec["regime"].get("matched") is False and word != "not resolved at this scale":
        word += " at an unmatched regime"
    return "\n".join([
        f"{rung}, sample {sample}, {len(seeds)} seeds, round 10, alpha inf minus alpha 0.01 (Welch, 95 %):", "",
        f"primary, global effective rank: {mean:+.1f} [{low:+.1f}, {high:+.1f}] -> **{word}**", "",
        "secondary: " + "; ".join(_contrast(params, per, seeds, i, n) for i in range(len(params["panels"]))
                                  for n in ("effective_rank", "n_relative_top")
                                  if (i, n) != (0, "effective_rank")) + "."])


def _welch_inf_minus(per: dict, seeds: list, panel: int, name: str) -> tuple[float, float, float]:
    from collapse_lab.judging.verdict import ALPHA, _t, welch

    series = per[seeds[0]]["panels"][panel]["series"]
    at = {str(x["key"]["alpha"]): j for j, x in enumerate(series)}
    vals = {a: [per[s]["panels"][panel]["series"][at[a]]["metrics"][name] for s in seeds] for a in ("inf", "0.01")}
    mean, se, df = welch(vals["inf"], vals["0.01"], 1.0)
    half = _t(1 - ALPHA / 2, df) * se
    return mean, mean - half, mean + half


BLOCKS = {"summary": summary, "plateau": plateau, "dead": dead, "timeline": timeline, "units": units,
          "sixseeds": sixseeds}
if (SCALE / "b" / "records" / "n300-e10-bn-lr0.01-s6--feddecorr-fig2.json").is_file():
    BLOCKS["sixseeds-b"] = lambda: sixseeds("b")
if (SCALE / "b" / "records" / "n300-e10-bn-s6--feddecorr-fig2.json").is_file():  # lr 0.05, sample b
    BLOCKS["sixseeds-lr0.05-b"] = lambda: sixseeds("b", "n300-e10-bn-s6")
if (SCALE / "a" / "records" / "n300-e10-bn-s6--feddecorr-fig2.json").is_file():  # the amendment's test
    BLOCKS["endpoint"] = endpoint
    BLOCKS["sixseeds-lr0.05-a"] = lambda: sixseeds("a", "n300-e10-bn-s6")
if all((SCALE / _s / "records" / f"{R30}--feddecorr-fig2.json").is_file() for _s in ("a", "b")):
    BLOCKS["both-r30"] = lambda: both(R30)
for _s in ("a", "b"):  # the 30-round extension, once Fig. 2's record of a sample is in
    if (SCALE / _s / "records" / f"{R30}--feddecorr-fig2.json").is_file():
        BLOCKS[f"sixseeds-r30-{_s}"] = (lambda s_: lambda: sixseeds(s_, R30))(_s)
sys.path.insert(0, str(HERE))
import scale_confirm  # noqa: E402  (the protocol's blocks: its own file)

BLOCKS.update(scale_confirm.BLOCKS)


def _span(name: str, text: str) -> tuple[int, int] | None:
    """Where block ``name``'s numbers stand in the page (between its two markers), if it is there."""
    start = f"<!-- numbers:{name} -->\n"
    i = text.find(start)
    if i < 0:
        return None
    j = text.find("<!-- /numbers -->", i + len(start))
    return None if j < 0 else (i + len(start), j)  # a block without its end marker is not a block


def page_block(name: str, text: str) -> str | None:
    span = _span(name, text)
    return None if span is None else text[span[0]:span[1]].removesuffix("\n")


def block_on_pages(name: str) -> str | None:
    """Block ``name`` as it stands on the first page that holds it (None: on no page)."""
    for p in PAGES:
        if (got := page_block(name, p.read_text())) is not None:
            return got
    return None


def main(argv: list[str]) -> int:
    if argv[:1] == ["--write"]:  # every block of the pages that stands there, rewritten from the records
        from collapse_lab.files import write_bytes

        for path in PAGES:
            page = path.read_text()
            for n, f in BLOCKS.items():
                if (span := _span(n, page)) is not None:
                    page = page[:span[0]] + f() + "\n" + page[span[1]:]
            write_bytes(path, page.encode())  # atomic: a full disk leaves the old page, never half of one
        missing = [n for n in BLOCKS if block_on_pages(n) is None]
        rec = scale_confirm.record()
        print("every block rewritten" + (f"; on no page yet: {', '.join(missing)}" if missing else "")
              + (f"; {rec.relative_to(HERE.parent)} written" if rec else ""))
        return 0
    if argv[:1] == ["--check"]:
        bad = [n for n, f in BLOCKS.items() if block_on_pages(n) != f()]
        print("differ: " + ", ".join(bad) if bad else "every block equals its page")
        return 1 if bad else 0
    if unknown := [a for a in argv if a not in BLOCKS]:
        print(f"usage: python docs/scale_numbers.py [--check | --write | BLOCK ...]; {unknown[0]!r} is not a block "
              f"(blocks: {', '.join(BLOCKS)})", file=sys.stderr)
        return 2
    for name in argv or list(BLOCKS):
        print(BLOCKS[name]())
    return 0


def guarded(argv: list[str]) -> int:
    """``main``, with a damaged, missing or unwritable file said in one line (exit status 2)."""
    from collapse_lab.errors import CollapseLabError

    try:
        return main(argv)
    except json.JSONDecodeError as e:
        print(f"scale_numbers: a record under {SCALE} is not valid JSON ({e}); restore it with git checkout",
              file=sys.stderr)
    except (KeyError, TypeError, ValueError) as e:
        print(f"scale_numbers: a record under {SCALE} lacks what it should hold ({type(e).__name__}: {e}); "
              "restore it with git checkout", file=sys.stderr)
    except OSError as e:
        print(f"scale_numbers: {e.filename or SCALE}: {e.strerror or e}; restore the file with git checkout, or "
              "make the folder writable", file=sys.stderr)
    except CollapseLabError as e:
        print(f"scale_numbers: {e}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(guarded(sys.argv[1:]))
