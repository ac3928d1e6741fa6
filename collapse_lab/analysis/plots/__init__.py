"""Plot functions: each takes an ``ax`` (or axes) and returns the figure; nothing calls plt.show()."""
from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: figures are files

import matplotlib.pyplot as plt  # noqa: E402

from ...files import missing_folders, remove_empty, temp_file  # noqa: E402


def save_figure(fig, out_dir: Path, stem: str) -> list[Path]:
    """Write <stem>.pdf and <stem>.png atomically; returns the paths. A write that fails
    leaves nothing new: no temporary file, neither file of a new pair, no folder this call made. A full disk ends as
    the OSError it is (matplotlib's writers can bury it under a zlib or stream error)."""
    out_dir = Path(out_dir)
    created = missing_folders(out_dir)
    new = {p for p in (out_dir / f"{stem}.pdf", out_dir / f"{stem}.png") if not p.exists()}
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    try:
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
    except Exception as e:
        for p in paths:  # a new pair is removed whole; a pair rewritten in place keeps what was replaced
            if p in new:
                p.unlink(missing_ok=True)
        remove_empty(created)
        full = disk_full(e, out_dir)
        if full is not None:
            raise full from e
        raise
    finally:
        plt.close(fig)
    return paths


def save_figures(items, out_dir: Path) -> list[Path]:
    """Write one command's figures, ``items`` = [(figure, stem), ...], into ``out_dir`` all or
    none: when one fails, the files the earlier ones added (not those they rewrote in place)
    and the folders this call made are removed, so a full disk leaves ``out_dir`` as it was."""
    out_dir = Path(out_dir)
    created = missing_folders(out_dir)
    paths, added = [], []
    try:
        for fig, stem in items:
            added += [p for p in (out_dir / f"{stem}.pdf", out_dir / f"{stem}.png") if not p.exists()]
            paths += save_figure(fig, out_dir, stem)
    except BaseException:
        for fig, _ in items:
            plt.close(fig)
        for p in added:
            p.unlink(missing_ok=True)
        remove_empty(created)
        raise
    return paths


def disk_full(e: BaseException, where: Path) -> OSError | None:
    """The ENOSPC/EDQUOT behind ``e`` (``e`` itself, its cause or context), or one made for
    ``where`` when the disk there has no room left; None when the disk is not the reason."""
    import errno

    seen = e
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno in (errno.ENOSPC, errno.EDQUOT):
            return seen if seen.filename else OSError(seen.errno, seen.strerror, str(where))
        seen = seen.__cause__ or seen.__context__
    try:
        st = os.statvfs(where if where.exists() else where.parent)
    except OSError:
        return None
    if st.f_bavail * st.f_frsize < 1 << 20:  # under 1 MiB left: the write failed for room
        return OSError(errno.ENOSPC, "No space left on device", str(where))
    return None


__all__ = ["plt", "save_figure", "save_figures"]
