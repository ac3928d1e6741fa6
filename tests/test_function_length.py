"""No function in ``collapse_lab/`` is longer than 60 lines (issue 49 item 5), counted from
its ``def`` line to its last line (decorators, such as a command's click options, are
declarations and do not count). ``python -m tests.test_function_length`` lists the longest."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "collapse_lab"
LIMIT = 60


def lengths() -> list[tuple[int, str]]:
    out = []
    for p in sorted(PKG.rglob("*.py")):
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append((node.end_lineno - node.lineno + 1, f"{p.relative_to(PKG.parent)}:{node.lineno} {node.name}"))
    return sorted(out, reverse=True)


def test_the_count_is_def_to_last_line():
    src = "@dec\ndef f(a,\n      b):\n    x = 1\n\n    return x\n"
    (node,) = [n for n in ast.walk(ast.parse(src)) if isinstance(n, ast.FunctionDef)]
    assert node.end_lineno - node.lineno + 1 == 5


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
