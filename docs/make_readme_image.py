"""Regenerate the README's image, docs/img/spectrum-digits.png, from the current code: the
README's two commands (``collapse-lab train`` on the embedded digits, then ``collapse-lab
spectrum``) in a temporary folder, the figure copied into place.

    python docs/make_readme_image.py        # about a minute on 2 cores
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

IMAGE = Path(__file__).resolve().parent / "img" / "spectrum-digits.png"


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        for cmd in (["train"], ["spectrum"]):
            subprocess.run([sys.executable, "-m", "collapse_lab.entry", *cmd], cwd=tmp, check=True)
        pngs = sorted(Path(tmp, "figures").glob("spectrum_*.png"))
        if len(pngs) != 1:
            print(f"expected one spectrum figure, found {[p.name for p in pngs]}", file=sys.stderr)
            return 1
        IMAGE.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(pngs[0], IMAGE)
    print(f"wrote {IMAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
