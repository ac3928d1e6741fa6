"""The path a ``--store`` takes from ``figures`` to the files visits each package once.

Every call chain from the command down (the runs planned, trained and rendered from the
store) is traced in a fresh interpreter; along each chain a collapse_lab package is one
stretch: the chain never leaves a package and comes back to it. Imports point down only
(tests/test_layers.py), so the one way back up is a function handed down, and three kinds
are the design:

- the plugin registry calling the plugin it dispatches to (``registry.call -> models.mlp``);
- the atomic writer calling the writer it was given (``files._atomic -> tensor_files.write``);
- the progress line the command hands down (the sweep reports each run's end through the
  catalogue's ``report`` to the command's ``say``).

Anything else that comes back is a new climb and fails here with its chain.
``python -m tests.test_store_path`` prints every chain that comes back, and why it may.
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

PROBE = textwrap.dedent("""
    import json, sys
    from collapse_lab.cli import cli

    def package(frame):
        name = frame.f_globals.get("__name__", "")
        return name.split(".")[1] if name.startswith("collapse_lab.") else None

    chains = {}

    def watch(frame, event, arg):
        if event != "call" or package(frame) is None:
            return
        chain, f = [], frame
        while f is not None:
            if package(f) is not None:
                chain.append((package(f), f.f_globals["__name__"], f.f_code.co_name))
            f = f.f_back
        chain.reverse()
        if any(fn == "<module>" for _, _, fn in chain):  # importing: a registry calls its decorators
            return
        stretches = [p for i, (p, _, _) in enumerate(chain) if i == 0 or chain[i - 1][0] != p]
        if len(set(stretches)) != len(stretches):
            chains.setdefault(json.dumps(chain), 0)
            chains[json.dumps(chain)] += 1

    sys.setprofile(watch)
    code = cli.main(sys.argv[1:], standalone_mode=False)
    sys.setprofile(None)
    assert code in (0, None), code
    print("CHAINS " + json.dumps([json.loads(c) for c in chains]))
""")

DISPATCHERS = {("collapse_lab.registry", "call"), ("collapse_lab.registry", "discover"),
               ("collapse_lab.registry", "deco"), ("collapse_lab.files", "_atomic")}
REPORTERS = {("collapse_lab.catalogue.training", "report"), ("collapse_lab.commands.catalogue_cmd", "<lambda>")}


def comebacks(chain: list) -> list[tuple]:
    """(caller, callee) at each point where ``chain`` re-enters a package it had left."""
    out = []
    for i in range(1, len(chain)):
        pkg = chain[i][0]
        if pkg != chain[i - 1][0] and pkg in {p for p, _, _ in chain[:i - 1]}:
            out.append((tuple(chain[i - 1][1:]), tuple(chain[i][1:])))
    return out


def why_allowed(caller: tuple, callee: tuple) -> str | None:
    if caller in DISPATCHERS:
        return "handed down: " + ("the registry's plugin" if caller[0].endswith("registry") else "the writer")
    if callee in REPORTERS:
        return "handed down: the progress line"
    return None


def trace(args: list[str]) -> list[list]:
    res = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    line = [x for x in res.stdout.splitlines() if x.startswith("CHAINS ")]
    return json.loads(line[-1][len("CHAINS "):])


def figures_chains(root: Path) -> list[list]:
    """``figures`` training its smoke runs into a new store, then rendering them from it."""
    return trace(["figures", "feddecorr-fig2", "--smoke", "--store", str(root / "store"), "--out", str(root / "out"),
                  "--workers", "1"])


def test_comebacks_are_found_and_judged():
    """The rule on hand-made chains: a climb is found, a dispatch and a report are allowed."""
    climb = [["catalogue", "collapse_lab.catalogue.x", "f"], ["store", "collapse_lab.store.y", "g"],
             ["catalogue", "collapse_lab.catalogue.busy", "wait"]]
    assert comebacks(climb) == [(("collapse_lab.store.y", "g"), ("collapse_lab.catalogue.busy", "wait"))]
    assert why_allowed(*comebacks(climb)[0]) is None
    plugin = [["models", "collapse_lab.models", "build_model"], ["registry", "collapse_lab.registry", "call"],
              ["models", "collapse_lab.models.mlp", "mlp"]]
    assert why_allowed(*comebacks(plugin)[0]).endswith("the registry's plugin")
    assert comebacks([["sweep", "collapse_lab.sweep.a", "f"], ["store", "collapse_lab.store.b", "g"]]) == []


@pytest.mark.slow  # one interpreter training four smoke runs under a profiler
def test_figures_store_path_visits_each_package_once(tmp_path):
    chains = figures_chains(tmp_path)
    assert chains, "the probe saw no chain come back (the registry dispatches in every run): it traced nothing"
    climbs = [(c, cb) for c in chains for cb in comebacks(c) if why_allowed(*cb) is None]
    assert climbs == [], "\n".join(" -> ".join(f"{m}.{fn}" for _, m, fn in c) for c, _ in climbs)
    packages = {p for c in chains for p, _, _ in c}
    assert {"catalogue", "sweep", "training", "analysis", "store"} <= packages  # it trained and rendered


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as d:
        seen = {}
        for chain in figures_chains(Path(d)):
            for caller, callee in comebacks(chain):
                key = (" -> ".join(p for i, (p, _, _) in enumerate(chain) if i == 0 or chain[i - 1][0] != p),
                       ".".join(caller), ".".join(callee))
                seen[key] = why_allowed(caller, callee) or "A CLIMB"
        for (path, caller, callee), why in sorted(seen.items()):
            print(f"{path}\n    {caller} -> {callee}: {why}")
        print(f"chains that come back: {len(seen)}; climbs: {sum(w == 'A CLIMB' for w in seen.values())}")
