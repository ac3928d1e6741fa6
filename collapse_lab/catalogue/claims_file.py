"""The claims of a preset's rendered figures as files: ``<out>/claims-<preset>.json`` (every
record, per-seed lines included; the source the report reads) and ``CLAIMS-<preset>.md``
made from it (judging/seeds.py for the verdict over seeds), and how a render with ``--set``
names its overrides and its folder."""
from __future__ import annotations

from pathlib import Path


def _md(text) -> str:
    """A Markdown table cell: pipes escaped, one line, emphasis and code marks taken literally."""
    s = " ".join(str(text).split())
    for ch in "\\|*_`<>":
        s = s.replace(ch, "\\" + ch)
    return s


def override_folder(over: dict) -> str:
    """The folder a render with ``--set`` writes to, beside the default render and never over
    it: ``set-lr=0.05,rounds=1`` (characters outside ``[A-Za-z0-9._=,+-]`` become ``_``)."""
    import re

    return "set-" + re.sub(r"[^A-Za-z0-9._=,+-]", "_", _overrides_text(over).replace(", ", ","))


def _overrides_text(over: dict) -> str:
    """``--set``'s overrides as the command wrote them (``catalogue.overrides.describe``)."""
    parts = []
    for k, v in sorted(over.items()):
        parts += [f"{k}.{s}={x}" for s, x in sorted(v.items())] if isinstance(v, dict) else [f"{k}={v}"]
    return ", ".join(parts)


def claims_markdown(records: list[dict], preset: str) -> str:
    from ..judging.seeds import verdict_text

    lines = [f"# Claims of the papers' figures, checked on the `{preset}` runs", "",
             "Verdict over seeds (`judging/verdict.py`): **holds** when every comparison's 95 % Student-t interval "
             "excludes the opposite direction; **refuted** when one excludes the claimed direction after Holm's "
             "correction; *uninformative (measure saturated)* when a strict claim's values all sit at the measure's "
             "ceiling or floor; else *not resolved at this scale*. The direction count beside it (the claimed way in "
             "k of n seeds) is not a verdict. Over seeds: each number that differs between seeds as mean [95 % "
             "Student-t interval]."] + ([
             "", "**The quick preset is a stand-in at a toy scale, an unmatched regime: its verdicts check the code path, "
             "they are not a test of the paper.** `--preset cpu` on real data, or a ladder (docs/scale.md), tests it."]
             if preset == "quick" else []) + ["",
             "| entry | claim | measured (seed means) | over seeds | verdict | per seed |", "|---|---|---|---|---|---|"]
    for rec in records:
        for c in rec.get("claims", []):
            per = "; ".join(f"seed {p['seed']}: {'yes' if p['holds'] else 'no' if p['holds'] is False else '-'}"
                            for p in c.get("per_seed", []))
            over = c.get("over_seeds") or ("" if "per_seed" not in c else
                                          " / ".join(f"seed {p['seed']}: {p['measured']}" for p in c["per_seed"]))
            name = rec["entry"] + (f" (--set {_overrides_text(rec['overrides'])})" if rec.get("overrides") else "")
            lines.append(f"| {_md(name)} | {_md(c['text'])} | {_md(c['measured'])} | {_md(over)} | "
                         f"{verdict_text(c)} | {_md(per)} |")
    return "\n".join(lines) + "\n"


def merge_claims(out: Path, preset: str, records: list[dict]) -> Path:
    """One claims record per preset, ``<out>/claims-<preset>.json`` (the source the report
    reads) with ``CLAIMS-<preset>.md`` made from it. Merged by entry: an entry rendered now
    replaces its own rows; an entry not rendered now, or whose render failed, keeps what an
    earlier call wrote; entries stay in catalogue order."""
    import json

    from ..analysis.catalogue import SPECS, _order
    from ..files import write_bytes, write_json

    path = out / f"claims-{preset}.json"
    try:
        old = {r["entry"]: r for r in json.loads(path.read_text()) if isinstance(r, dict) and "entry" in r}
    except (OSError, ValueError):
        old = {}
    new = {r["entry"]: {"entry": r["entry"], "claims": r.get("claims", []),
                        **({"overrides": r["overrides"]} if r.get("overrides") else {})}
           for r in records if "claims" in r}
    merged = {**old, **new}
    order = {p.stem: i for i, p in enumerate(sorted(SPECS.glob("*.yaml"), key=_order))}  # catalogue order
    rows = sorted(merged.values(), key=lambda r: (order.get(r["entry"], len(order)), r["entry"]))
    write_json(path, rows)
    write_bytes(out / f"CLAIMS-{preset}.md", claims_markdown(rows, preset).encode())
    return path
