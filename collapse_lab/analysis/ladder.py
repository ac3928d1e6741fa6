"""A ladder record's claims as the analysis recomputes them: from the evidence it keeps, by
the entry's spec and the rules as they are now (``judging.ladder`` holds the rules), and
the ladder's table, its comparison of two samples and the line that counts a record's verdicts."""
from __future__ import annotations

from ..judging.ladder import accuracy_claims, effect_text, has_evidence, legacy, summary, word
from ..judging.verdict import OPEN


def claims_of(rec: dict) -> list[dict]:
    """A record's claims: the entry's own, then Table 1's comparison where its runs vary the
    regularizer. A record that keeps the evidence (``evidence.FORMAT``) has every claim
    recomputed from it by the specs and rules as they are; an older record keeps its
    claims' verdicts (read as ``legacy`` says), Table 1's comparison recomputed from its
    regime measures. A report asks for each record's claims several times: they are kept
    by the record's content and its entry's spec as it is now (a copy each time)."""
    import copy
    import json

    from .catalogue import SPECS

    spec = SPECS / f"{rec.get('entry')}.yaml"
    key = json.dumps(rec, sort_keys=True, default=str) + (spec.read_text() if spec.is_file() else "")
    if key not in _CLAIMS:
        if len(_CLAIMS) >= 256:
            _CLAIMS.clear()
        _CLAIMS[key] = _claims_of(rec)
    return copy.deepcopy(_CLAIMS[key])


_CLAIMS: dict[str, list[dict]] = {}


def _claims_of(rec: dict) -> list[dict]:
    if "claims" not in rec:
        return []
    runs = rec.get("regime", {}).get("runs", [])
    if has_evidence(rec):
        from .catalogue import pick
        from .evidence import VALUES, claims

        entry = pick([rec["entry"]], "figure")[0].at(rec["preset"])
        # an entry drawn from the store alone (reg_loss, accuracy curves): its claims as the record computed them
        own = (claims(entry, runs, summary(runs)["matched"]) if entry.renderer in VALUES
               else [dict(c) for c in rec["claims"]])
    else:
        metric = _metrics_by_text(rec)
        own = [legacy(c, metric.get(c.get("text"))) for c in rec["claims"]]
    return own + accuracy_claims(runs)


def _metrics_by_text(rec: dict) -> dict:
    """The metric each claim of the record's entry reads, by its text (as the spec says now)."""
    from .catalogue import catalogue

    entries = {e.name: e for e in catalogue("figure")}  # a broken spec raises here, never a silent {}
    if rec["entry"] not in entries:  # an entry no longer in the catalogue: its claims as kept
        return {}
    return {c["text"]: c.get("metric") for c in entries[rec["entry"]].claims}


def rows(records: list[dict]) -> list[dict]:
    """One row per rung, entry and claim: the ladder's table (md/csv)."""
    out = []
    for r in records:
        reg = r.get("regime", {})
        for i, c in enumerate(claims_of(r)):
            out.append({"rung": r["rung"], "entry": r["entry"], "claim": i + 1, "text": c["text"],
                        "form": c.get("form", ""), "verdict": word(c, reg.get("matched")),
                        "claimed_way_in": f"{c.get('claimed_way_in', c.get('holds_in', ''))} of {c.get('seeds', '')}",
                        "effect": effect_text(c), "seeds_to_resolve": c.get("seeds_to_resolve"),
                        "own_acc_min": reg.get("own_acc_min"), "plateau_max_points": reg.get("plateau_max_points"),
                        "dead_share_max_fedavg": reg.get("dead_share_max_fedavg"),
                        "train_seconds_sum": reg.get("train_seconds_sum"), "regime_matched": reg.get("matched")})
    return out


def across_samples(records: list[dict], other: list[dict]) -> list[dict]:
    """Per rung, entry and claim, the verdicts on two independent samples of the data and
    the ladder's verdict: the same word where they agree, else not resolved at this scale
    (docs/scale.md: a claim may not hold on one sample and be unresolved on the other)."""
    theirs = {(r["rung"], r["entry"]): r for r in other if "claims" in r}
    out = []
    for r in records:
        o = theirs.get((r["rung"], r["entry"]))
        if "claims" not in r or o is None:
            continue
        theirs_by_text = {c["text"]: c for c in claims_of(o)}  # a claim is told by its text (records' formats differ)
        for i, a in enumerate(claims_of(r)):
            b = theirs_by_text.get(a["text"])
            if b is None:
                continue
            wa, wb = word(a, r["regime"].get("matched")), word(b, o["regime"].get("matched"))
            out.append({"rung": r["rung"], "entry": r["entry"], "claim": i + 1, "text": a["text"], "a": wa, "b": wb,
                        "verdict": wa if wa == wb else OPEN, "agree": wa == wb})
    return out


def verdict_line(rec: dict) -> str:
    """A record's verdicts counted by word, then its regime, in one line (the ladder's progress)."""
    words = [word(c, rec["regime"].get("matched")) for c in claims_of(rec)]
    reg = rec["regime"]
    return (", ".join(f"{words.count(w)} {w}" for w in dict.fromkeys(words)) + f"; regime: clients own data "
            f"{_pct(reg['own_acc_min'])} (min), plateau {_num(reg['plateau_max_points'])} points, FedAvg dead units "
            f"{_pct(reg['dead_share_max_fedavg'])} (max) -> {'matched' if reg['matched'] else 'not matched'}")


def _pct(x) -> str:
    return "n/a" if x is None else f"{100 * x:.1f} %"


def _num(x) -> str:
    return "n/a" if x is None else f"{x:.2f}"
