"""Each protocol (the confirmation's, docs/scale/protocol-confirmatory.md; the methods entry's,
docs/beyond/protocol.md) was fixed before its first evidence and never changed after it: its
text at the first commit that added a run's evidence equals its text now (committed and on
disk)."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROTOCOLS = {"docs/scale/protocol-confirmatory.md": "docs/scale/c/records/runs",
             "docs/beyond/protocol.md": "docs/beyond/records/runs"}


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module", params=sorted(PROTOCOLS))
def history(request):
    try:
        if _git("rev-parse", "--is-shallow-repository").strip() != "false":
            pytest.skip("a shallow clone: the protocol's history is not here")
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the protocol's history is not here")
    protocol = request.param
    return protocol, _git("log", "--diff-filter=A", "--format=%H", "--reverse", "--", PROTOCOLS[protocol]).split()


def test_the_protocol_precedes_the_first_evidence_and_never_changed_after(history):
    PROTOCOL, history = history
    if not history:
        return  # no confirmatory evidence yet: the protocol may still be amended
    first = history[0]
    at_first = subprocess.run(["git", "show", f"{first}:{PROTOCOL}"], cwd=ROOT, capture_output=True, text=True)
    assert at_first.returncode == 0, f"{PROTOCOL} did not exist when {first[:7]} added the first evidence"
    assert at_first.stdout == _git("show", f"HEAD:{PROTOCOL}"), "the protocol changed after the first evidence"
    assert at_first.stdout == (ROOT / PROTOCOL).read_text(), "the protocol on disk differs from the committed one"
    since = _git("log", "--format=%H", f"{first}..HEAD", "--", PROTOCOL).split()
    assert not since, f"commits after the first evidence touch the protocol: {since}"
