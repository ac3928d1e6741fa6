"""A data root with every data set the paper preset reads, in the real on-disk formats, a
few random images per class: what ``figures/tables --preset paper --smoke`` runs on where
the real data are not (CI, a laptop). ``python -m tests.paper_data DIR`` writes it.

Formats as the loaders read them (docs/data-formats.md): CIFAR's python pickles,
TinyImageNet's JPEG folders and val annotations, STL-10's column-major binaries, LEAF's
FEMNIST JSON, the domain sets' <domain>/<class>/*.jpg folders under their usual names,
HAM10000's metadata CSV and image folders."""
from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path

import numpy as np

DOMAIN_SETS = {"kfold": (["art_painting", "cartoon", "photo", "sketch"], 7),
               "OfficeHomeDataset_10072016": (["Art", "Clipart", "Product", "Real World"], 65),
               "office_caltech_10": (["amazon", "caltech", "dslr", "webcam"], 10),
               "DomainNet": (["clipart", "infograph", "painting", "quickdraw", "real", "sketch"], 10)}


def _jpeg(path: Path, rng, size: int) -> None:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(rng.integers(0, 256, size=(size, size, 3), dtype=np.uint8)).save(path, quality=90)


def _pickle(path: Path, d: dict) -> None:
    with open(path, "wb") as f:
        pickle.dump(d, f, protocol=2)


def cifar(root: Path, rng, classes: int, train_per_class: int, test_per_class: int) -> None:
    ten = classes == 10
    base = root / ("cifar-10-batches-py" if ten else "cifar-100-python")
    base.mkdir(parents=True, exist_ok=True)
    key = b"labels" if ten else b"fine_labels"

    def batch(n_per_class: int, name: str) -> dict:
        y = [c for c in range(classes) for _ in range(n_per_class)]
        d = {b"data": rng.integers(0, 256, size=(len(y), 3072), dtype=np.uint8), key: y, b"batch_label": name.encode()}
        if not ten:
            d[b"coarse_labels"] = [c // 5 for c in y]
        return d

    if ten:
        full = batch(train_per_class, "train")
        for i, part in enumerate(np.array_split(np.arange(len(full[key])), 5), 1):
            _pickle(base / f"data_batch_{i}", {b"data": full[b"data"][part], key: [full[key][j] for j in part],
                                               b"batch_label": f"batch {i}".encode()})
        _pickle(base / "test_batch", batch(test_per_class, "test"))
        _pickle(base / "batches.meta", {b"label_names": [f"class{i}".encode() for i in range(classes)]})
    else:
        _pickle(base / "train", batch(train_per_class, "train"))
        _pickle(base / "test", batch(test_per_class, "test"))
        _pickle(base / "meta", {b"fine_label_names": [f"class{i}".encode() for i in range(classes)]})


def tinyimagenet(root: Path, rng, train_per_class: int, test_per_class: int, classes: int = 200) -> None:
    base = root / "tiny-imagenet-200"
    wnids = [f"n{10000000 + i}" for i in range(classes)]
    base.mkdir(parents=True, exist_ok=True)
    (base / "wnids.txt").write_text("\n".join(wnids) + "\n")
    ann = []
    for i, w in enumerate(wnids):
        for j in range(train_per_class):
            _jpeg(base / "train" / w / "images" / f"{w}_{j}.JPEG", rng, 64)
        (base / "train" / w / f"{w}_boxes.txt").write_text("")
        for j in range(test_per_class):
            name = f"val_{i * test_per_class + j}.JPEG"
            _jpeg(base / "val" / "images" / name, rng, 64)
            ann.append(f"{name}\t{w}\t0\t0\t63\t63")
    (base / "val" / "val_annotations.txt").write_text("\n".join(ann) + "\n")


def stl10(root: Path, rng, train_per_class: int, test_per_class: int) -> None:
    base = root / "stl10_binary"
    base.mkdir(parents=True, exist_ok=True)
    for split, n in (("train", train_per_class), ("test", test_per_class)):
        y = np.repeat(np.arange(1, 11), n).astype(np.uint8)  # labels 1..10
        img = rng.integers(0, 256, size=(len(y), 3, 96, 96), dtype=np.uint8)
        (base / f"{split}_X.bin").write_bytes(np.ascontiguousarray(img.transpose(0, 1, 3, 2)).tobytes())  # column-major
        (base / f"{split}_y.bin").write_bytes(y.tobytes())
    (base / "class_names.txt").write_text("\n".join(f"c{i}" for i in range(10)) + "\n")


def femnist(root: Path, rng, writers: int, per_writer: int) -> None:
    base = root / "femnist" / "data"
    for split, n in (("train", per_writer), ("test", max(1, per_writer // 4))):
        users = {f"f{w:04d}": {"x": (rng.integers(0, 256, size=(n, 784)) / 255.0).round(4).tolist(),
                               "y": rng.integers(0, 62, size=n).tolist()} for w in range(writers)}
        (base / split).mkdir(parents=True, exist_ok=True)
        (base / split / "all_data_0.json").write_text(json.dumps(
            {"users": list(users), "num_samples": [n] * writers, "user_data": users}))


def domain_sets(root: Path, rng, per_class: int) -> None:
    for folder, (domains, classes) in DOMAIN_SETS.items():
        for d in domains:
            for c in range(classes):
                for j in range(per_class):
                    _jpeg(root / folder / d / f"class{c:02d}" / f"{j}.jpg", rng, 24)


def ham10000(root: Path, rng, per_class: int) -> None:
    rows = ["lesion_id,image_id,dx,dx_type,age,sex,localization,dataset"]
    k = 0
    for src in ("rosendahl", "vidir_modern", "vidir_molemax", "vienna_dias"):
        for dx in ("akiec", "bcc", "bkl", "df", "mel", "nv", "vasc"):
            for _ in range(per_class):
                img = f"ISIC_{k:07d}"
                _jpeg(root / f"HAM10000_images_part_{1 + k % 2}" / f"{img}.jpg", rng, 24)
                rows.append(f"HAM_{k},{img},{dx},histo,50,male,back,{src}")
                k += 1
    (root / "HAM10000_metadata.csv").write_text("\n".join(rows) + "\n")


def write_paper_data(root: Path, seed: int = 0) -> Path:
    """Every paper-preset data set under ``root``; returns ``root``. Sizes: the fewest
    training images per class that every split of the paper preset accepts, a few test
    images per class."""
    root = Path(root)
    rng = np.random.default_rng(seed)
    cifar(root, rng, 10, 60, 4)  # FedETF's scenes split: 100 clients, 50 shares of each CIFAR-10 class
    cifar(root, rng, 100, 24, 1)  # ... and 20 of each CIFAR-100 class
    tinyimagenet(root, rng, 10, 1)  # the journal's pathological split: up to all 10 clients hold a class
    stl10(root, rng, 8, 2)
    femnist(root, rng, writers=120, per_writer=4)
    domain_sets(root, rng, 5)
    ham10000(root, rng, 5)
    return root


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m tests.paper_data DIR")
    print(write_paper_data(Path(sys.argv[1])))
