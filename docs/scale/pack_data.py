"""A compact copy of a CIFAR-10 python folder for a GPU machine that receives the working tree
and at most 64 MiB of it: the same batches, keys and values, re-pickled with protocol 4 instead of
the official protocol 2, which spells every byte of the images as text (the keys are written
as text, as a reader with ``encoding="latin1"``, torchvision's, sees the official files).
The copy's images, labels and file names are checked equal to the original's through
collapse-lab's own reader before it is kept.

    python docs/scale/pack_data.py ../shared/data/cifar10-subset .device/cifar10-subset

writes the folder .device/cifar10-subset/ and its xz archive .device/cifar10-subset.tar.xz (which travels).

(docs/scale/device_run.sh says where the copy goes and how it travels.)
"""
from __future__ import annotations

import pickle
import shutil
import sys
import tarfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # this checkout's package, installed or not
FILES = ["data_batch_1", "data_batch_2", "data_batch_3", "data_batch_4", "data_batch_5", "test_batch"]


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python docs/scale/pack_data.py SOURCE_ROOT DEST_ROOT", file=sys.stderr)
        return 2
    src, dest = Path(argv[0]) / "cifar-10-batches-py", Path(argv[1]) / "cifar-10-batches-py"
    if not src.is_dir():
        print(f"pack_data: {src} is not a CIFAR-10 python folder", file=sys.stderr)
        return 2
    tmp = dest.with_name(dest.name + ".partial")
    made = [p for p in (dest.parent, *dest.parent.parents) if not p.exists()]
    try:
        return _pack(src, tmp, dest)
    except OSError as e:  # a full disk or a read-only folder: one line, nothing left behind
        shutil.rmtree(tmp, ignore_errors=True)
        for p in made:
            if p.is_dir() and not any(p.iterdir()):
                p.rmdir()
        print(f"pack_data: cannot write {tmp} ({e.strerror or e}); nothing kept", file=sys.stderr)
        return 1


def _pack(src: Path, tmp: Path, dest: Path) -> int:
    from collapse_lab.data.cifar import read_batch

    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    shutil.copyfile(src / "batches.meta", tmp / "batches.meta")
    for name in FILES:
        d = read_batch(src / name)
        (tmp / name).write_bytes(pickle.dumps(d, protocol=4))
        again = read_batch(tmp / name)
        if again.keys() != d.keys() or not all(np.array_equal(again[k], d[k]) if isinstance(d[k], np.ndarray)
                                                 else again[k] == d[k] for k in d):
            print(f"pack_data: {name} does not read back equal; nothing kept", file=sys.stderr)
            shutil.rmtree(tmp)
            return 1
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)
    size = sum(p.stat().st_size for p in dest.iterdir())
    print(f"pack_data: {dest} ({size / 2**20:.1f} MiB, from {sum(p.stat().st_size for p in src.iterdir()) / 2**20:.1f})")
    archive = dest.parent.with_name(dest.parent.name + ".tar.xz")  # what travels: a quarter smaller again
    part = archive.with_name(archive.name + ".partial")
    with tarfile.open(part, "w:xz", preset=6) as tar:
        tar.add(dest, arcname=dest.name)
    part.rename(archive)
    print(f"pack_data: {archive} ({archive.stat().st_size / 2**20:.1f} MiB; device_run.sh unpacks it)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
