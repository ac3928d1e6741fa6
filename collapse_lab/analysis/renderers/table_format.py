"""A computed table as Markdown, CSV and LaTeX (booktabs): rows and columns in the paper's
order, mean +- std over seeds, the best value per column in bold (highest accuracy; no bold
for timings and derived rows), with ``compare`` the paper's printed value and the
difference beside each cell."""
from __future__ import annotations

import csv
import io


def _fmt(m, s, digits: int) -> str:
    if m is None:
        return "–"
    return f"{m:.{digits}f}" + (f" ± {s:.{digits}f}" if s is not None else "")


def _best(values: dict) -> dict:
    """Per column, the row holding the best ours value (accuracy tables only)."""
    if values["metric"] == "minutes_per_round":
        return {}
    best = {}
    for c in values["cells"]:
        if c.get("derived") or c["ours_mean"] is None:
            continue
        b = best.get(c["column"])
        if b is None or c["ours_mean"] > b[1]:
            best[c["column"]] = (c["row"], c["ours_mean"])
    return {k: v[0] for k, v in best.items()}


def cell_text(c: dict, compare: bool, digits: int, bold: bool, md: bool = True) -> str:
    if c["ours_mean"] is None:
        ours = "n/a" if c.get("not_available") else "–"
    else:
        ours = _fmt(c["ours_mean"], c["ours_std"], digits)
        if bold:
            ours = f"**{ours}**" if md else f"\\textbf{{{ours}}}"
    if not compare:
        return ours
    paper = _fmt(c["paper_mean"], c["paper_std"], 2) if c["paper_mean"] is not None else "not printed"
    gap = ""
    if c["ours_mean"] is not None and c["paper_mean"] is not None:
        gap = f"; Δ {c['ours_mean'] - c['paper_mean']:+.{digits}f}"
    return f"{ours} (paper {paper}{gap})"


SCALING = {"official": "official (the released code's, which produced the printed numbers)",
           "paper": "paper (Eq. 8 as printed)"}


def render_all(values: dict, entry, compare: bool) -> dict:
    """The table as markdown (with its header: what a cell is, the data used), CSV (every
    cell with its runs) and LaTeX."""
    digits = 4 if values["metric"] == "minutes_per_round" else 2
    at = {(c["row"], c["column"]): c for c in values["cells"]}
    best = _best(values)
    cols = values["columns"]
    md = ["\n\n".join(_head(values, entry, digits)), "", "| | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for r in values["rows"]:
        md.append(f"| {r} | " + " | ".join(cell_text(at[(r, col)], compare, digits, best.get(col) == r)
                                             if (r, col) in at else "" for col in cols) + " |")
    missing = sorted({(c["row"], c["not_available"]) for c in values["cells"]
                      if c.get("not_available") and c["not_available"] != "derived"})
    if missing:
        md += ["", "Not available:"] + [f"- {r}: {why}" for r, why in missing]
    tex = ["\\begin{tabular}{l" + "c" * len(cols) + "}", "\\toprule",
           " & " + " & ".join(col.replace("_", "\\_") for col in cols) + " \\\\", "\\midrule"]
    for r in values["rows"]:
        cells = [cell_text(at[(r, col)], compare, digits, best.get(col) == r, md=False).replace("±", "$\\pm$")
                 .replace("Δ", "$\\Delta$") if (r, col) in at else "" for col in cols]
        tex.append(f"{r.replace('|', '+').replace('_', chr(92) + '_')} & " + " & ".join(cells) + " \\\\")
    tex += ["\\bottomrule", "\\end{tabular}"]
    return {"md": "\n".join(md) + "\n", "csv": _csv(values), "tex": "\n".join(tex) + "\n"}


def _head(values: dict, entry, digits: int) -> list[str]:
    """The table's header lines: the entry, the metric, the device, precision, overrides and
    scaling; what a cell is; the data each column used off the paper preset."""
    data = {}
    for c in values["cells"]:
        if c.get("data"):
            data.setdefault(c["column"], set()).add(c["data"])
    head = [f"{entry.name} ({entry.paper}, {entry.source}) at --preset {values['preset']}: "
            + ("minutes per round" if digits == 4 else f"{values['metric'].replace('_', ' ')} test accuracy (%)")
            + (f"; device: {', '.join(values['devices'])}" if values.get("devices") else "")
            + (f"; runs trained in {values['precision']}" if values.get("precision") else "")
            + (f"; every run with --set {values['overrides']}" if values.get("overrides") else "")
            + (f"; FedDecorr scaling: {' and '.join(SCALING[k] for k in values['feddecorr_scaling'])}"
               if values.get("feddecorr_scaling") else "")]
    ns = sorted({c["n"] for c in values["cells"] if c.get("n")})
    if ns:  # what a cell is, as the papers print it (FedDecorr Tables 1-10: mean and std over 3 runs)
        n = str(ns[0]) if len(ns) == 1 else f"{ns[0]}-{ns[-1]}"
        head.append(f"cells: mean ± standard deviation over {n} seed{'s' if ns[-1] > 1 else ''}"
                    + (" (one seed: no spread)" if ns == [1] else ""))
    if values.get("smoke"):
        head.insert(0, "SMOKE: one round, one local step per client, a small test set; the numbers prove the path, not the "
                       "papers' results")
    if values["preset"] != "paper":
        head.append("data actually used: " + "; ".join(f"{col} -> {', '.join(sorted(data.get(col, {'n/a'})))}"
                                                        for col in values["columns"]))
        head.append(f"{values['preset']}-preset numbers are not expected to match the paper's")
    return head


def _csv(values: dict) -> str:
    """Every cell with the paper's value, the difference and the runs it averages."""
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["table", "row", "column", "data", "ours_mean", "ours_std", "n", "paper_mean", "paper_std",
                "difference", "not_available", "runs"])
    for c in values["cells"]:
        d = (c["ours_mean"] - c["paper_mean"]) if c["ours_mean"] is not None and c["paper_mean"] is not None else ""
        w.writerow([values["reference"], c["row"], c["column"], c.get("data") or "", c["ours_mean"], c["ours_std"],
                    c.get("n", 0), c["paper_mean"], c["paper_std"], d, c.get("not_available") or "",
                    " ".join(c["runs"])])
    return out.getvalue()
