"""Layers point one way. Read from the source with ``ast``, so an import inside a function
counts as much as one at the top of a file; ``python -m tests.test_layers`` prints the
table and the module-level circles (0).

    core (errors, files, tensor_files, registry, seeds, linalg, config, ...)
      <- below both subsystems: math and the plugin registries (spectra, data, models,
         partition, methods, regularizers, augment) and any network's layers (layerwise)
      <- labels (a run's settings in words)
      <- store (format, naming, finding runs, locks)
      <- runspec (the one resolver: options and sweep specs -> runs)
      <- training (engine, trainer, probe) <- sweep      judging (claims, verdicts, regime, plateau,
                                                         arms, the protocol's tests)
                                                         <- analysis (features, measures, theory,
                                                         plots, renderers given runs)
      <- plan (the catalogue's planning: an entry's runs at a preset), bench, importer
      <- catalogue <- actions (one function per user action) <- api
      <- commands; cli (the group: names the commands, loads each when called) <- entry

Training and analysis stand side by side above the store: neither imports the other, and
the catalogue's planning (``plan``) stands above both.
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path


PKG = Path(__file__).resolve().parents[1] / "collapse_lab"
CORE = {"collapse_lab", "errors", "faults", "signals", "timelimit", "seeds", "registry", "options", "devices", "files",
        "tensor_files", "linalg",
        "config_files", "config", "data_root", "where"}
# the plugins' registries and pure math; methods build a run's model (its projection head); layerwise reads layers
BELOW_BOTH = {"spectra", "data", "models", "partition", "methods", "regularizers", "augment", "layerwise"}
# top-level package or module -> what it may import (besides itself)
ALLOWED = {
    **{m: CORE for m in CORE},
    **{m: CORE for m in BELOW_BOTH},
    "methods": CORE | {"models"},
    "layerwise": CORE | {"spectra"},  # reads any network's layers into spectra (the probe and the analysis)
    "analyses": set(),  # the catalogue's data (the top-level analyses/ folder)
    "labels": CORE | {"partition"},  # the settings of a run in words (every layer that names runs)
    "store": CORE | {"partition", "data", "models"},  # the writer checks a foreign run's data set, model, inputs
    "runspec": CORE | BELOW_BOTH | {"store"},
    "training": CORE | BELOW_BOTH | {"store", "runspec"},
    "sweep": CORE | BELOW_BOTH | {"store", "training", "runspec"},
    # the rules that judge claims (verdicts, regime, arms, the protocol's tests): below the analysis
    "judging": CORE | BELOW_BOTH | {"store", "labels"},
    "analysis": CORE | BELOW_BOTH | {"store", "analyses", "judging", "labels"},
    # planning: an entry's runs at a preset, and what runs cost (estimates, pilots, dry-runs)
    "plan": CORE | BELOW_BOTH | {"judging", "labels", "store", "runspec", "analysis", "analyses", "training", "sweep"},
    "bench": CORE | BELOW_BOTH | {"judging", "labels", "store", "training", "runspec", "sweep", "analysis"},
    # the figures, tables and ladder as a library, above the subsystems and below the command line
    "catalogue": CORE | BELOW_BOTH | {"judging", "labels", "store", "training", "runspec", "sweep", "analysis", "analyses", "bench", "plan"},
    # one library function per user action: what each command calls between parsing and printing
    "actions": CORE | BELOW_BOTH | {"judging", "labels", "store", "training", "runspec", "sweep", "analysis", "analyses", "bench", "plan",
                                    "catalogue", "importer"},
    "commands": CORE | BELOW_BOTH | {"judging", "labels", "store", "training", "runspec", "sweep", "analysis", "analyses", "bench", "plan",
                                     "catalogue", "importer", "actions"},
    "importer": CORE | BELOW_BOTH | {"store", "runspec"},  # other code's checkpoints recorded as a run
    "flower": CORE | {"store"},  # records a Flower run into the store (the flower extra)
    "api": CORE | BELOW_BOTH | {"judging", "labels", "store", "training", "runspec", "sweep", "analysis", "plan", "importer", "actions"},
    "cli": CORE,  # the group, its command table (commands named, loaded when called) and how a command ends
    "entry": {"cli", "faults"},  # the start-up fault points (tests stop it at a chosen moment)
}

SIDE_BY_SIDE = ("training", "sweep", "analysis")


def top_level_names() -> set[str]:
    names = {p.stem for p in PKG.glob("*.py") if p.stem != "__init__"}
    names |= {p.name for p in PKG.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    return names | {"collapse_lab", "analyses"}


def module_of(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(source: str, module: str, is_package: bool = False) -> set[str]:
    """The collapse_lab modules a source imports, as dotted names (relative imports resolved
    against ``module``; ``from . import x`` names ``x``), wherever the import statement is."""
    out = set()
    base = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                pkg = base[: len(base) - (node.level - 1)]
                target = ".".join(pkg + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "collapse_lab":
                continue
            for a in node.names:
                out.add(f"{target}.{a.name}")  # a submodule or a name in it: the caller trims names
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "collapse_lab")
    return out


def graph() -> dict[str, set[str]]:
    """module -> the collapse_lab modules it imports (a name imported from a module counts as the module)."""
    files = {module_of(p): p for p in PKG.rglob("*.py")}
    files["collapse_lab.analyses"] = PKG.parent / "analyses" / "__init__.py"
    edges = {}
    for mod, path in files.items():
        targets = set()
        for t in imports_of(path.read_text(), mod, path.name == "__init__.py"):
            while t not in files and "." in t:
                t = t.rsplit(".", 1)[0]
            if t in files and t != mod:
                targets.add(t)
        edges[mod] = targets
    return edges


def top(mod: str) -> str:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]; counter[0] += 1; stack.append(root); on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]; counter[0] += 1; stack.append(w); on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop(); on.discard(w); comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def violations(edges: dict[str, set[str]]) -> dict[str, list[str]]:
    bad = {}
    for mod, targets in edges.items():
        allowed = ALLOWED[top(mod)] | {top(mod)}
        wrong = sorted(t for t in targets if top(t) not in allowed)
        if wrong:
            bad[mod] = wrong
    return bad


def dangling() -> list[tuple[str, str]]:
    """(module, what it imports from) where the module imported from is no file of the
    package: a relative import that counts one dot wrong fails only when its line runs."""
    files = {module_of(p): p for p in PKG.rglob("*.py")} | {"collapse_lab.analyses": None}
    out = []
    for mod, path in files.items():
        if path is None:
            continue
        for t in imports_of(path.read_text(), mod, path.name == "__init__.py"):
            source = t.rsplit(".", 1)[0]  # ``from SOURCE import name``, or the package of ``import a.b``
            if source not in files and t not in files:
                out.append((mod, t))
    return sorted(out)


def test_every_import_names_a_module_that_exists():
    assert dangling() == []


def test_every_package_has_a_row():
    assert top_level_names() == set(ALLOWED), top_level_names() ^ set(ALLOWED)


def test_no_module_imports_a_layer_it_may_not():
    assert not violations(graph())


def test_there_is_no_import_circle():
    assert circles(graph()) == []


def test_training_and_analysis_stand_side_by_side():
    """Neither subsystem imports the other, nor the resolver or planning above the store
    (the analysis is handed its runs), and both may import the store."""
    edges = graph()
    training, analysis = {"training", "sweep", "runspec", "plan"}, {"analysis", "plan"}
    assert not {m: t for m, t in edges.items() if top(m) == "analysis" and any(top(x) in training for x in t)}
    assert not {m: t for m, t in edges.items() if top(m) in ("training", "sweep") and any(top(x) in analysis for x in t)}
    for side in ("training", "analysis"):
        assert "store" in ALLOWED[side] and not ALLOWED[side] & {"plan", "commands", "api"}


def test_the_check_sees_every_way_an_import_is_written():
    """The parser itself: relative, absolute, ``from .. import x`` and imports inside
    functions are all found; a circle and a forbidden edge are caught."""
    mod = "collapse_lab.analysis.features.extract"
    for code in ("from ...training.engine import train\n", "from ... import training\n",
                 "import collapse_lab.training.engine\n",
                 "def f():\n    from collapse_lab.training.prepare import prepare\n"):
        assert any(top(t) == "training" for t in imports_of(code, mod)), code
    assert {top(t) for t in imports_of("from ...store import RunDir\nfrom .cache import x\n", mod)} == {"store",
                                                                                                          "analysis"}
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert violations({"collapse_lab.analysis.x": {"collapse_lab.training.engine"}}) == {
        "collapse_lab.analysis.x": ["collapse_lab.training.engine"]}


def main() -> None:
    edges = graph()
    per = {}
    for m, ts in edges.items():
        for t in ts:
            if top(t) != top(m):
                per.setdefault(top(m), set()).add(top(t))
    print(f"{len(edges)} modules, {sum(len(t) for t in edges.values())} imports (inside functions too)")
    print("| package | imports | may import |\n|---|---|---|")
    for name in sorted(ALLOWED):
        print(f"| {name} | {', '.join(sorted(per.get(name, ()))) or '-'} | "
              f"{', '.join(sorted(ALLOWED[name] - {'collapse_lab'})) or '-'} |")
    print(f"forbidden imports: {len(violations(edges))}; import circles: {len(circles(edges))}")


if __name__ == "__main__":
    sys.exit(main())


def test_the_catalogues_data_imports_nothing_and_is_read_through_one_loader():
    """analyses/ is data: no module there imports the package, and one module of the package
    (analysis.catalogue, the loader) reads it."""
    for path in (PKG.parent / "analyses").rglob("*.py"):
        tree = ast.parse(path.read_text())
        names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 0]
        assert not [n for n in names if n.split(".")[0] == "collapse_lab"], path
        assert not [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level > 0], path
    readers = sorted(m for m, targets in graph().items() if "collapse_lab.analyses" in targets)
    assert readers == ["collapse_lab.analysis.catalogue"], readers
