"""Methods and regularizers against FedAvg (collapse-lab's own entry, docs/beyond/protocol.md):
per alpha, each arm's global and client-0 effective rank, relative count, tail share,
accuracy and dead units, its paired difference from FedAvg of the same seed, and its two
claims (wider, more accurate) under Holm; the figure plots effective rank against accuracy,
one point per arm with its seeds' 95 % intervals.

The values come from the runs' evidence (``analysis.evidence.run_evidence`` with the regime's
accuracy and dead units), read from the store here or from a ladder's kept evidence
(``methods_values``), so a render from either is the same. Arms whose runs are not complete
(diverged, failed, not trained) are listed with why, never dropped.
"""
from __future__ import annotations

from .. import RENDERERS
from ...judging.arms import MEASURES, arm_name, methods_values
from ...judging.verdict import regime_word

def _store_rows(entry, ctx) -> tuple[list[dict], list[dict]]:
    """The entry's complete runs as evidence rows, and the others with why."""
    from ...spectra.rank import dead_units
    from ...store import RunDir, run_path
    from ..context import last_round
    from ..evidence import run_evidence
    from ...judging.regime import test_accuracy

    rows, missing = [], []
    for c in ctx.configs(entry):
        if ctx.seed is not None and c.seed != ctx.seed:
            continue
        run = RunDir(run_path(ctx.store, c))
        if not run.is_complete(c.rounds):
            status = run.status() if run.exists() else "not trained"
            missing.append({"run": c.run_name(), "arm": arm_name(c.identity()), "seed": c.seed, "why": status})
            continue
        r = last_round(run, c.rounds)
        acc = test_accuracy(run)
        z = ctx.features.features(run, r, None)
        rows.append({**run_evidence(ctx, run, r, acc), "test_acc": acc.get(r), "dead_units": len(dead_units(z)),
                     "seed": c.seed, "alpha": c.identity()["alpha"], "setting": c.seedless_key(), "run": c.run_name()})
    return rows, missing


class Methods:
    metrics = MEASURES

    @staticmethod
    def compute(entry, ctx) -> dict:
        rows, missing = _store_rows(entry, ctx)
        return methods_values(entry.params, rows, missing=missing)

    @staticmethod
    def draw(values: dict, entry):
        from ..plots.methods import draw_methods

        return draw_methods(values, entry)

    @staticmethod
    def judged(values: dict, matched: bool | None = None) -> list[dict]:
        """The family's claims as the catalogue's claim records (the verdict with its regime)."""
        out = []
        for panel in values["panels"]:
            arms = {r["arm"]: r for r in panel["arms"]}
            for c in panel["claims"]:
                d = arms[c["arm"]]["diff"][c["measure"]]
                measured = (f"{c['arm']} - {panel['baseline']}: {d['mean']:+.3g} [{d['low']:.3g}, {d['high']:.3g}] "
                            f"(alpha {panel['alpha']}; p+ {c['p_plus']:.3g}, p- {c['p_minus']:.3g}, Holm over "
                            f"{len(panel['claims'])})" if d["low"] is not None else f"{d['mean']:+.3g} (one seed)")
                out.append({"text": f"alpha {panel['alpha']}: {c['text']}", "check": "paired", "form": "scale-free",
                            "holds": c["verdict"] == "holds", "verdict": c["verdict"],
                            "word": regime_word(c["verdict"], matched), "measured": measured,
                            "seeds": len(arms[c["arm"]]["seeds"])})
        return out

    @staticmethod
    def markdown(values: dict, matched: bool | None = None) -> str:
        from ..plots.methods import table_md

        return table_md(values, matched)


RENDERERS.register("methods", kind="figure")(Methods)
