"""Layers point one way: data flows config -> data set -> partition -> clients -> rounds ->
store -> features -> spectra/metrics -> figures, and no module imports one above it. Read
from the source with ``ast``, so an import inside a function counts too."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "collapse_lab"

# package -> packages it must never import (training is above the analysis' inputs)
FORBIDDEN = {
    "features": ("fl", "regularizers", "bench", "commands", "cli", "resolve"),
    "spectra": ("fl", "regularizers", "features", "store", "bench", "commands", "cli", "resolve"),
    "theory": ("fl", "regularizers", "bench", "commands", "cli", "resolve"),
    "plots": ("fl", "regularizers", "bench", "commands", "cli", "resolve"),
    "data": ("fl", "models", "partition", "regularizers", "store", "features", "commands", "cli", "resolve"),
    "models": ("fl", "data", "partition", "regularizers", "store", "features", "commands", "cli", "resolve"),
    "partition": ("fl", "models", "regularizers", "features", "commands", "cli", "resolve"),
    "augment": ("fl", "data", "models", "regularizers", "store", "features", "commands", "cli", "resolve"),
    "regularizers": ("fl", "features", "spectra", "store", "commands", "cli", "resolve"),
    "store": ("fl", "regularizers", "features", "commands", "cli", "resolve"),
    "fl": ("features", "spectra", "plots", "commands", "cli", "bench"),
    "analyses": ("commands", "cli", "bench"),
}

# The figure catalogue reads the store and the model registry, never the training loop.
TRAINING_LOOP = ("engine", "trainer", "schedule", "stacked", "local")


def fl_modules_of(path: Path) -> set[str]:
    """The collapse_lab.fl modules a file imports (``from ...fl.engine import`` -> engine)."""
    out = set()
    rel = path.relative_to(PKG).with_suffix("").parts
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            parts = (list(rel[: len(rel) - node.level]) if node.level else []) + node.module.split(".")
            parts = parts[1:] if parts[0] == "collapse_lab" else parts
            if parts[0] == "fl" and len(parts) > 1:
                out.add(parts[1])
    return out


def test_the_analyses_never_import_the_training_loop():
    bad = {str(f.relative_to(PKG)): sorted(fl_modules_of(f) & set(TRAINING_LOOP)) for f in files_of("analyses")}
    assert not {f: b for f, b in bad.items() if b}


def imported_packages(path: Path) -> set[str]:
    """The collapse_lab sub-packages/modules a file imports (absolute or relative)."""
    return imports_of(path.read_text(), path.relative_to(PKG).with_suffix("").parts)


def imports_of(source: str, rel: tuple[str, ...]) -> set[str]:
    """``rel``: the module's path inside the package, e.g. ("fl", "methods", "moon")."""
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the file's package
                base = list(rel[: len(rel) - node.level])
                target = base + (node.module.split(".") if node.module else [])
                if not target:  # "from .. import x": x names the module
                    out.update(a.name for a in node.names)
                else:
                    out.add(target[0])
            elif node.module and node.module.startswith("collapse_lab."):
                out.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            out.update(a.name.split(".")[1] for a in node.names if a.name.startswith("collapse_lab."))
    return out


def files_of(package: str) -> list[Path]:
    return sorted((PKG / package).rglob("*.py"))


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_layer_imports_one_above_it(package):
    bad = {str(f.relative_to(PKG)): sorted(imported_packages(f) & set(FORBIDDEN[package])) for f in files_of(package)}
    bad = {f: b for f, b in bad.items() if b}
    assert not bad, f"{package} imports layers above it: {bad}"


def test_the_check_sees_relative_and_absolute_imports():
    """The parser itself: a forbidden import written any way is found, an allowed one is not."""
    rel = ("features", "extract")
    for code in ("from ..fl.engine import train\n", "from .. import fl\n", "import collapse_lab.fl.engine\n",
                 "def f():\n    from collapse_lab.regularizers import REGULARIZERS\n"):
        assert imports_of(code, rel) & {"fl", "regularizers"}, code
    assert imports_of("from ..store import RunDir\nfrom .cache import x\n", rel) == {"store", "features"}
    assert imports_of("from ...seeds import seed_for\n", ("fl", "methods", "moon")) == {"seeds"}
