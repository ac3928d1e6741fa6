"""No function in ``collapse_lab/`` is longer than 50 lines, counted from its ``def`` line to
its last line (decorators, such as a command's click options, are declarations and do not
count), and no file longer than 300 lines. ``python -m tests.test_function_length`` lists
the longest."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "collapse_lab"
LIMIT = 50
FILE_LIMIT = 300
COMMAND_FILE_LIMIT = 100  # a command parses, calls its action and prints: collapse_lab/commands/


def lengths(pkg: Path = PKG) -> list[tuple[int, str]]:
    out = []
    for p in sorted(pkg.rglob("*.py")):
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append((node.end_lineno - node.lineno + 1, f"{p.relative_to(pkg.parent)}:{node.lineno} {node.name}"))
    return sorted(out, reverse=True)


def file_lengths(pkg: Path = PKG) -> list[tuple[int, str]]:
    return sorted(((len(p.read_text().splitlines()), str(p.relative_to(pkg.parent))) for p in pkg.rglob("*.py")),
                  reverse=True)


def test_the_counts_are_def_to_last_line_and_a_files_lines(tmp_path):
    """The counters on a package written here: a decorated function of 5 lines, a nested one
    of 2 inside a method of 3, and the file's 12 lines."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "m.py").write_text("@dec\ndef f(a,\n      b):\n    x = 1\n\n    return x\n\n\nclass C:\n"
                              "    def g(self):\n        def h():\n            return 1\n")
    assert lengths(pkg) == [(5, "pkg/m.py:2 f"), (3, "pkg/m.py:10 g"), (2, "pkg/m.py:11 h")]
    assert file_lengths(pkg) == [(12, "pkg/m.py")]


def test_no_file_is_longer_than_the_limit():
    long = [f"{n} lines: {where}" for n, where in file_lengths() if n > FILE_LIMIT]
    assert not long, "\n".join(long)


def test_no_command_file_is_longer_than_its_limit():
    long = [f"{n} lines: {where}" for n, where in file_lengths(PKG / "commands") if n > COMMAND_FILE_LIMIT]
    assert not long, "\n".join(long)


def test_no_function_is_longer_than_the_limit():
    long = [f"{n} lines: {where}" for n, where in lengths() if n > LIMIT]
    assert not long, "\n".join(long)


def main() -> None:
    rows = lengths()
    for n, where in rows[:15]:
        print(f"{n:>4} {where}")
    print(f"functions over {LIMIT} lines: {sum(n > LIMIT for n, _ in rows)}; longest: {rows[0][0]}")


if __name__ == "__main__":
    sys.exit(main())
