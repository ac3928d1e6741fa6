"""Check (and, with --rewrite, write) the catalogue's specs.

    python -m collapse_lab.catalogue.check_specs            # check every spec
    python -m collapse_lab.catalogue.check_specs --rewrite  # write each back without YAML anchors

Check: every spec loads through the catalogue's loader (keys, renderer, claims), its claims
read metrics its renderer writes (the measures' names, ``spectra.measures``), its runs
expand through the resolver at both presets, and every table cell names a printed value of
``reference/all_tables_long.csv`` (the papers' numbers, stored once), each printed value one cell. ``--rewrite`` writes a
spec back as plain YAML, without the anchors and aliases an earlier generator left, only
where the loaded content stays exactly the same; ``--json`` prints the findings.
"""
from __future__ import annotations

import argparse
import json
import sys

import yaml

from ..analysis.catalogue import SPECS


class _Plain(yaml.SafeDumper):
    def ignore_aliases(self, data):  # every repeated mapping written out in full
        return True


def check() -> list[str]:
    from collapse_lab.analysis.catalogue import load_entry, matches, unknown_metrics
    from collapse_lab.plan import entry_runs
    from collapse_lab.analysis.renderers.table import reference
    from collapse_lab.analysis.table_spec import pair
    from collapse_lab.errors import CollapseLabError

    problems = []
    for path in sorted(SPECS.glob("*.yaml")):
        try:
            entry = load_entry(path)
            for preset in entry.runs:
                configs = entry_runs(entry, preset)
                for panel in entry.at(preset).params.get("panels") or []:  # every panel selects runs
                    where = panel.get("where") if isinstance(panel, dict) else None
                    if where and not any(matches(c, where) for c in configs):
                        problems.append(f"{path.name}: at --preset {preset} no run matches panel "
                                        f"{panel.get('title', '')!r} where {where}")
        except CollapseLabError as e:
            problems.append(f"{path.name}: {e}")
            continue
        for m in unknown_metrics(entry):
            problems.append(f"{path.name}: a claim reads the metric {m!r}, which renderer {entry.renderer} does not "
                            f"write (it writes {', '.join(entry_metrics(entry)) or 'none'})")
        if entry.kind == "table" and "reference" in entry.params:  # every cell beside its printed number, by key
            try:
                pair(entry.params.get("cells", []), reference(entry.params["reference"]), path.name)
            except CollapseLabError as e:
                problems.append(str(e))
    return problems


def entry_metrics(entry) -> tuple:
    from collapse_lab.analysis import RENDERERS

    return RENDERERS.get(entry.renderer).metrics


def rewrite() -> list[str]:
    changed = []
    for path in sorted(SPECS.glob("*.yaml")):
        text = path.read_text()
        data = yaml.safe_load(text)
        out = yaml.dump(data, Dumper=_Plain, sort_keys=False, allow_unicode=True, width=120, default_flow_style=None)
        if out != text and yaml.safe_load(out) == data:
            path.write_text(out)
            changed.append(path.name)
    return changed


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rewrite", action="store_true")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    changed = rewrite() if a.rewrite else []
    problems = check()
    n = len(list(SPECS.glob("*.yaml")))
    if a.json:
        print(json.dumps({"specs": n, "rewritten": changed, "problems": problems}, indent=1))
    else:
        for p in problems:
            print(p, file=sys.stderr)
        print(f"{n} specs checked, {len(problems)} problem(s)" + (f", {len(changed)} rewritten" if a.rewrite else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
