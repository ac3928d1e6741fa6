"""``collapse-lab figures``: every figure of the papers from one command. Trains the runs
that are missing (through the sweep engine), renders each entry of the catalogue
(``analyses/specs/``) to ``<out>/<name>.pdf/.png`` with its plotted numbers in
``<name>.json``, and checks each figure's claim (``--check``; ``<out>/CLAIMS-<preset>.md``)."""
from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import click

from ..errors import CollapseLabError
from .catalogue_cmd import begin, catalogue_options, lacking_data, missing_line
from ..analysis.claims_file import evaluate_safely, merge_claims

SMOKE_NOTE = "SMOKE: one round, one local step per client, a small test set: proves the path, not the papers' numbers"


def verdict_counts(claims: list[dict]) -> str:
    """``; over seeds: 1 holds, 1 refuted, 1 not resolved at this scale`` (the claims whose
    effects have an interval over seeds; ``analysis.seeds.verdict``)."""
    from ..analysis.seeds import HOLDS, OPEN, REFUTED

    got = [c.get("verdict") for c in claims if c.get("verdict")]
    if not got:
        return ""
    return "; over seeds: " + ", ".join(f"{got.count(w)} {w}" for w in (HOLDS, REFUTED, OPEN) if got.count(w))


def render(entry, ctx, out: Path) -> dict:
    """Compute, draw and check one entry; returns its record (paths, claims, seconds). A
    smoke render is marked on the figure and checks no claim."""
    from ..analysis import RENDERERS
    from ..files import write_json
    from ..analysis.plots import save_figure

    t0 = time.time()
    entry = entry.at(ctx.preset)  # its parameters at this preset
    r = RENDERERS.get(entry.renderer)
    values = r.compute(entry, ctx)
    claims = []
    for c in entry.claims:
        if ctx.smoke:
            claims.append({"text": c["text"], "check": c["check"], "holds": None, "measured": "not checked (smoke)"})
            continue
        claims.append(evaluate_safely(c, values))
    seeds = [] if ctx.smoke or not entry.claims else ctx.seeds(entry)
    if seeds:  # every claim also on each seed alone (analysis/seeds.py: the verdict and the interval)
        from ..analysis.seeds import over_seeds

        per_seed = {s: r.compute(entry, dataclasses.replace(ctx, seed=s)) for s in seeds}
        claims = [over_seeds(c, [(s, evaluate_safely(spec, per_seed[s])) for s in seeds])
                  for c, spec in zip(claims, entry.claims)]
    # the line under a figure says how the runs differ from the paper's: not at the paper preset
    differs = entry.differs_at(ctx.preset)
    precision = ctx.trained_in(entry)
    if "bf16" in precision:  # the papers' (released) codes train in fp32
        differs = [*differs, f"runs trained in {precision} (bf16: autocast; the papers' codes train in fp32)"]
    if ctx.overrides:  # --set: every run of the entry trained so
        from .overrides import describe

        # said as what replaces the preset's values, not beside them (the preset's line names its own)
        differs = [*differs, f"every run with --set {describe(ctx.overrides)} (replacing the preset's value"
                             f"{'s' if len(describe(ctx.overrides).split(', ')) > 1 else ''} named above)"]
    fig = r.draw(values, dataclasses.replace(entry, differs=differs))
    if ctx.smoke:
        fig.text(0.5, 1.0, SMOKE_NOTE, ha="center", va="bottom", fontsize=8, color="#b00000", weight="bold")
    paths = save_figure(fig, out, entry.name)
    write_json(out / f"{entry.name}.json", {"entry": entry.name, "preset": ctx.preset, "smoke": ctx.smoke,
                                            "precision": precision, "overrides": ctx.overrides,
                                            "values": values, "claims": claims,
                                            "differs": differs})
    return {"entry": entry.name, "files": [str(p) for p in paths], "precision": precision,
            "overrides": ctx.overrides, "claims": claims,
            "seconds": round(time.time() - t0, 2)}


@click.command("figures")
@catalogue_options("figures", "Figure folder.", "List the catalogue's figures: runs present/missing, last rendered.",
                   "Print every entry's record (files, claims) as JSON on stdout.")
@click.option("--check", is_flag=True, help="Print each claim with its numbers (always written to "
                                            "<out>/CLAIMS-<preset>.md and claims-<preset>.json, merged by entry).")
def figures_cmd(names, preset, store, out, list_, no_train, backend, workers, stack, address, as_json, dry_run_,
                smoke, keep, time_limit, check):
    """Render NAMEs (default: every figure of the catalogue) at --preset."""
    o = dict(list_=list_, no_train=no_train, backend=backend, workers=workers, stack=stack, address=address,
             as_json=as_json, dry_run_=dry_run_, smoke=smoke, keep=keep, time_limit=time_limit)
    run = begin("figures", names, preset, store, out, o, {"--check": check})
    if run is None:  # --dry-run, --list
        return
    records = [record_of(e, run, preset) for e in run.entries]
    if records:
        merge_claims(run.out, preset + ("-smoke" if smoke else ""), records)
    if check and not as_json:
        print_claims(records)
    t0, t_train, failed_runs = run.t0, run.t_train, run.failed
    if as_json:
        click.echo(json.dumps({"preset": preset, "smoke": smoke, "train_seconds": round(t_train, 1),
                               "seconds": round(time.time() - t0, 1), "failed_runs": failed_runs,
                               "entries": records}, indent=1))
    errors = [r for r in records if "error" in r]
    run.say(f"figures: {len(records) - len(errors)} of {len(records)} rendered in {time.time() - t0:.1f} s "
            f"(training {t_train:.1f} s); claims in {run.out / ('CLAIMS-' + preset + ('-smoke' if smoke else '') + '.md')}")
    if errors or failed_runs:
        raise SystemExit(1)


def record_of(e, run, preset: str) -> dict:
    """One entry rendered (or why not), said on stderr."""
    say, per_entry = run.say, run.per_entry
    if isinstance(per_entry[e.name], str):
        say(f"figures: {e.name}: {per_entry[e.name]}")
        return {"entry": e.name, "error": per_entry[e.name]}
    if e.not_rendered:
        say(f"figures: {e.name}: not rendered ({e.not_rendered})")
        return {"entry": e.name, "not_rendered": e.not_rendered}
    if lacking := lacking_data(per_entry[e.name], run.failed):
        say(f"figures: {e.name}: not rendered: {lacking}")
        return {"entry": e.name, "error": lacking}
    try:
        rec = render(e, run.ctx, run.out)
    except CollapseLabError as err:
        err = missing_line(err)
        say(f"figures: {e.name}: not rendered: {err}")
        return {"entry": e.name, "error": str(err)}
    held = [c["holds"] for c in rec["claims"]]
    say(f"figures: {e.name} -> {run.out / e.name}.png ({rec['seconds']:.1f} s, runs in {rec['precision']}); claims: "
        f"{sum(h is True for h in held)} hold, {sum(h is False for h in held)} do not"
        + (f", {sum(h is None for h in held)} not checked" if None in held else "")
        + verdict_counts(rec["claims"]))
    return rec


def print_claims(records: list[dict]) -> None:
    """--check: each claim with its numbers and verdict, one line each."""
    from ..analysis.seeds import verdict_text

    for rec in records:
        for c in rec.get("claims", []):
            over = f" | over seeds: {c['over_seeds']}" if c.get("over_seeds") else ""
            click.echo(f"{rec['entry']:<18} | {c['text']} | {c['measured']}{over} | "
                       f"{verdict_text(c).replace('**does not hold**', 'DOES NOT HOLD')}")
