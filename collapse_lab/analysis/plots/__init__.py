"""Plot functions: each takes an ``ax`` (or axes) and returns the figure; nothing calls plt.show()."""
from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: figures are files

import matplotlib.pyplot as plt  # noqa: E402

from ...files import temp_file  # noqa: E402


def save_figure(fig, out_dir: Path, stem: str) -> list[Path]:
    """Write <stem>.pdf and <stem>.png atomically; returns the paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext in ("pdf", "png"):
        final = out_dir / f"{stem}.{ext}"
        tmp = temp_file(out_dir, f".{stem}.", f".{ext}")
        try:
            # no creation date in the PDF: the same figure is the same bytes (a regenerated ladder)
            fig.savefig(tmp, format=ext, dpi=150, bbox_inches="tight",
                        **({"metadata": {"CreationDate": None}} if ext == "pdf" else {}))
            os.replace(tmp, final)
        except BaseException:
            os.unlink(tmp)
            raise
        paths.append(final)
    plt.close(fig)
    return paths


__all__ = ["plt", "save_figure"]
