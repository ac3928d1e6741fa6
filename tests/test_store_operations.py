"""Only the store knows its files (issue 49 item 2). Outside ``collapse_lab/store/`` no source
names a file or folder of a run (run.json, metrics.jsonl, round_<r>/, global/client/method
tensors, partition.safetensors, the features cache), globs a run folder, or asks a
``RunDir`` for a path; readers and writers call the store's operations (open a run, its
config, complete rounds, load a global or client state, metrics, method state, the
features cache, prune). Read with ``ast`` (strings, f-strings and attribute names), so a
comment or a docstring that mentions a file does not count; ``python -m
tests.test_store_operations`` lists what is left."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "collapse_lab"
# the store's own names, as they appear in strings
FILE_NAMES = ("run.json", "metrics.jsonl", "events.jsonl", "partition.safetensors", "global.safetensors",
              "method.safetensors", "method_clients.safetensors", ".features",
              # the store's folders beside its runs: locks, a sweep's logs, the account of SLURM jobs
              ".locks", ".sweep-logs", ".slurm", "submit.lock")
# walking a run's folder (its size, its files) is the store's: ``run.path.rglob(...)``
WALKS = {"glob", "rglob", "iterdir", "walk"}
PREFIXES = ("round_", "client_")  # round_<r>/, client_<k>.safetensors ("client_3" alone is a label)
# RunDir members that hand out a path inside the run
PATH_MEMBERS = {"round_dir", "global_path", "client_path", "method_path"}
# the store itself, and the tensor-file format it writes through
OWNERS = ("store/",)


def docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings (not code)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                out.add(id(first.value))
    return out


def names_a_file(s: str) -> bool:
    """A string that is (part of) a path into a run: one of the store's names as a whole path
    part, or a round/client prefix ("round_", "round_*", "client_3"); a message that mentions
    run.json in words is not."""
    if " " in s or s in PREFIXES:  # a sentence; a bare "round_" is click's name of --round
        return False
    parts = s.strip("/").split("/")
    return any(p in FILE_NAMES or (p.startswith("round_") and p[6:][:1] in "{*0123456789")
               or (p.startswith("client_") and (".safetensors" in p or "*" in p)) for p in parts)


def touches(source: str) -> list[str]:
    """What in ``source`` reaches into a run's files: the strings and attributes, with lines."""
    tree = ast.parse(source)
    skip = docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            if names_a_file(node.value):
                found.append(f"{node.lineno}: {node.value!r}")
        elif isinstance(node, ast.JoinedStr):  # f"round_{r}", f"client_{k}.safetensors" (not a label "client_{k}/loss")
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
            if text.startswith("round_{") or (text.startswith("client_{") and ".safetensors" in text):
                found.append(f"{node.lineno}: f{text!r}")
        elif isinstance(node, ast.Attribute) and node.attr in PATH_MEMBERS:
            found.append(f"{node.lineno}: .{node.attr}")
        elif (isinstance(node, ast.Attribute) and node.attr in WALKS and isinstance(node.value, ast.Attribute)
              and node.value.attr == "path"):
            found.append(f"{node.lineno}: .path.{node.attr}")
    return found


def offenders() -> dict[str, list[str]]:
    out = {}
    for p in sorted(PKG.rglob("*.py")):
        rel = p.relative_to(PKG).as_posix()
        if rel.startswith(OWNERS):
            continue
        hits = touches(p.read_text())
        if hits:
            out[rel] = hits
    return out


def test_the_scan_sees_what_it_should():
    """The scanner itself: a path built from the store's names, a glob, a RunDir path member
    and an f-string round folder are found; a docstring and an unrelated word are not."""
    code = ('"""run.json is read by the store."""\n'
            'a = run.path / "run.json"\nb = run.path.glob("round_*")\nc = run.global_path(3)\n'
            'd = run.path / f"round_{r}"\ne = "around_here"\nf = f"client_{k}/loss"\n'
            'g = sum(f.stat().st_size for f in run.path.rglob("*"))\nh = Path(store) / ".slurm" / "runs"\n'
            'i = store / ".sweep-logs"\n')
    hits = touches(code)
    assert sorted({int(h.split(":")[0]) for h in hits}) == [2, 3, 4, 5, 8, 9, 10], hits


def test_only_the_store_knows_its_files():
    left = offenders()
    assert left == {}, "\n".join(f"{f}: {', '.join(h)}" for f, h in left.items())


def main() -> None:
    left = offenders()
    for f, hits in left.items():
        print(f"{f}: {'; '.join(hits)}")
    print(f"files outside store/ that touch the store's files: {len(left)}")


if __name__ == "__main__":
    sys.exit(main())
