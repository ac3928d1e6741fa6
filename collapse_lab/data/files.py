"""Helpers shared by the on-disk loaders: finding files and the torchvision download."""
from __future__ import annotations

from pathlib import Path

from ..errors import CollapseLabError


def require_root(name: str, data_root: Path | None, layout: str) -> Path:
    if data_root is None:
        raise CollapseLabError(f"{name} reads from disk: pass --data-root DIR holding {layout}")
    data_root = Path(data_root)
    if not data_root.is_dir():
        from ..data_root import source_of

        raise CollapseLabError(f"{source_of(data_root)} {data_root} is not a folder; it should hold {layout}")
    return data_root


def find_first(candidates: list[Path]) -> Path | None:
    for c in candidates:
        if c.exists():
            return c
    return None


def torchvision_download(name: str, data_root: Path | None, layout: str) -> None:
    """Fetch a data set with torchvision into data_root (only where torchvision imports)."""
    if data_root is None:
        raise CollapseLabError(f"--download needs --data-root DIR to download {name} into")
    try:
        import torchvision.datasets as tvd  # optional extra; never imported at module load
    except Exception as e:  # CUDA torchvision beside CPU torch fails with odd errors, not only ImportError
        raise CollapseLabError(
            f"--download needs a working torchvision ({type(e).__name__}); without it, put {layout} under {data_root}"
        ) from None
    cls = {"mnist": tvd.MNIST, "cifar10": tvd.CIFAR10, "cifar100": tvd.CIFAR100}[name]
    for train in (True, False):
        cls(str(data_root), train=train, download=True)
