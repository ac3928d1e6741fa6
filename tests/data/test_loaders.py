"""Every loader on a fixture in its real on-disk format, compared with what was written."""
from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch
from PIL import Image

from collapse_lab.data import DATASETS, load_dataset
from collapse_lab.data.mnist import read_split
from collapse_lab.errors import CollapseLabError
from tests.conftest import SHARED_MNIST, write_cifar


def test_digits_fixed_stratified_split():
    from sklearn.datasets import load_digits

    d1, d2 = load_dataset("digits"), load_dataset("digits")
    assert torch.equal(d1.train_x, d2.train_x) and torch.equal(d1.test_y, d2.test_y)
    assert len(d1.train_y) + len(d1.test_y) == 1797
    # stratified: every class's test share is within one sample of 20%
    full = np.bincount(load_digits().target)
    test = d1.test_y.bincount(minlength=10).numpy()
    assert np.all(np.abs(test - 0.2 * full) <= 1)
    # the stored uint8 pixels are the scikit-learn values (0..16)
    assert int(d1.train_x.max()) == 16 and d1.train_x.dtype == torch.uint8


def test_digits_equal_scikit_learns_loader_and_split():
    """The file read without scikit-learn and the kept split are what scikit-learn's
    ``load_digits`` and ``train_test_split(test_size=0.2, stratify=y, random_state=0)`` give."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    from collapse_lab.data.digits import load_digits as ours

    sk = load_digits()
    x, y = sk.images.astype(np.uint8)[:, None], sk.target.astype(np.int64)
    tr, te = (np.sort(i) for i in train_test_split(np.arange(len(y)), test_size=0.2, stratify=y, random_state=0))
    d = ours()
    assert np.array_equal(d.train_x.numpy(), x[tr]) and np.array_equal(d.test_x.numpy(), x[te])
    assert np.array_equal(d.train_y.numpy(), y[tr]) and np.array_equal(d.test_y.numpy(), y[te])
    xs = x[tr].astype(np.float64) / 16.0
    assert d.mean == (float(xs.mean()),) and d.std == (float(xs.std()),)


def test_gaussian_configurable_and_seeded():
    d = load_dataset("gaussian", dim=7, num_classes=3, train_per_class=11, test_per_class=4)
    assert d.train_x.shape == (33, 7) and d.test_x.shape == (12, 7) and d.num_classes == 3
    assert torch.equal(d.train_y.bincount(), torch.tensor([11, 11, 11]))
    assert torch.equal(d.train_x, load_dataset("gaussian", dim=7, num_classes=3, train_per_class=11, test_per_class=4).train_x)


def test_mnist_idx_fixture(mnist_root):
    root, x_test, y_test = mnist_root
    d = load_dataset("mnist", data_root=root)
    assert d.train_x.shape == (60, 1, 28, 28) and d.test_x.shape == (20, 1, 28, 28)
    assert np.array_equal(d.test_x[:, 0].numpy(), x_test) and np.array_equal(d.test_y.numpy(), y_test)


def test_mnist_truncated_file_is_an_error(mnist_root):
    root = mnist_root[0] / "MNIST" / "raw"
    p = root / "t10k-images-idx3-ubyte"
    p.write_bytes(p.read_bytes()[:-5])
    with pytest.raises(CollapseLabError, match="truncated"):
        load_dataset("mnist", data_root=mnist_root[0])


@pytest.mark.skipif(not (SHARED_MNIST / "t10k-labels-idx1-ubyte.gz").exists(), reason="shared MNIST absent")
def test_real_mnist_test_set():
    x, y = read_split(SHARED_MNIST, "test")
    assert x.shape == (10000, 1, 28, 28) and x.dtype == torch.uint8
    # The published per-class counts of the MNIST test set.
    assert y.bincount().tolist() == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
    # idx images are 0..255 with a white-on-black background: most pixels are 0
    assert int(x.max()) == 255 and float((x == 0).float().mean()) > 0.75


@pytest.mark.parametrize("kind", ["cifar10", "cifar100"])
def test_cifar_python_folders(tmp_path, kind):
    written = write_cifar(tmp_path, kind)
    d = load_dataset(kind, data_root=tmp_path)
    train_files = [f for f in written if f not in ("test_batch", "test")]
    exp = np.concatenate([written[f][0] for f in train_files]).reshape(-1, 3, 32, 32)
    assert np.array_equal(d.train_x.numpy(), exp)
    assert d.train_y.tolist() == sum((written[f][1] for f in train_files), [])
    test_key = "test_batch" if kind == "cifar10" else "test"
    assert d.test_y.tolist() == written[test_key][1]
    assert d.num_classes == (10 if kind == "cifar10" else 100) and d.class_names[3] == "class3"
    # pixel (c=1, h=2, w=5) of image 0 is byte 1024 + 2*32 + 5 of its row: the standard layout
    assert int(d.train_x[0, 1, 2, 5]) == int(written[train_files[0]][0][0, 1024 + 64 + 5])


def test_cifar_refuses_code_in_pickle(tmp_path):
    write_cifar(tmp_path, "cifar100")

    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))

    with open(tmp_path / "cifar-100-python" / "train", "wb") as f:
        pickle.dump({b"data": Evil()}, f)
    with pytest.raises(CollapseLabError, match="not a readable CIFAR batch"):
        load_dataset("cifar100", data_root=tmp_path)


def _jpeg(path, color, size=(64, 64)):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, color).save(path, quality=95)


def test_tinyimagenet_folder(tmp_path):
    base = tmp_path / "tiny-imagenet-200"
    wnids = ["n01443537", "n01629819", "n01641577"]
    base.mkdir()
    (base / "wnids.txt").write_text("\n".join(wnids) + "\n")
    colors = [(250, 0, 0), (0, 250, 0), (0, 0, 250)]
    for i, w in enumerate(wnids):
        for j in range(2):
            _jpeg(base / "train" / w / "images" / f"{w}_{j}.JPEG", colors[i])
        (base / "train" / w / f"{w}_boxes.txt").write_text("")
    ann = []
    for j, i in enumerate([2, 0, 1, 2]):
        _jpeg(base / "val" / "images" / f"val_{j}.JPEG", colors[i])
        ann.append(f"val_{j}.JPEG\t{wnids[i]}\t0\t0\t63\t63")
    (base / "val" / "val_annotations.txt").write_text("\n".join(ann) + "\n")
    d = load_dataset("tinyimagenet", data_root=tmp_path)
    assert d.train_x.shape == (6, 3, 64, 64) and d.test_x.shape == (4, 3, 64, 64)
    assert d.train_y.tolist() == [0, 0, 1, 1, 2, 2] and d.test_y.tolist() == [2, 0, 1, 2]
    # the dominant channel of each decoded image is its class colour's channel
    assert d.test_x.float().mean(dim=(2, 3)).argmax(1).tolist() == [2, 0, 1, 2]


def test_domains_imagefolders(tmp_path):
    for dom, shade in (("amazon", 40), ("webcam", 200)):
        for c, ch in (("bike", 0), ("mug", 1)):
            for j in range(5):
                color = [shade // 4] * 3
                color[ch] = shade
                _jpeg(tmp_path / dom / c / f"{j}.jpg", tuple(color), size=(40, 30))
    d = load_dataset("domains", data_root=tmp_path, image_size=16)
    assert d.domains == ["amazon", "webcam"] and d.class_names == ["bike", "mug"]
    assert len(d.train_y) + len(d.test_y) == 20 and len(d.test_y) == 4  # 1 of 5 per (domain, class)
    assert d.train_x.shape[1:] == (3, 16, 16)
    # labels and domains follow the folders
    means = d.train_x.float().mean(dim=(2, 3))
    assert torch.equal(means[:, :2].argmax(1), d.train_y)
    assert torch.equal((means.max(1).values > 120).long(), d.train_domain)


def test_missing_files_name_the_layout(tmp_path):
    for name in ("mnist", "cifar10", "cifar100", "tinyimagenet", "domains", "stl10", "femnist", "pacs",
                 "office-home", "ham10000", "office-caltech10", "domainnet"):
        with pytest.raises(CollapseLabError, match="put|should hold|need|expected|not all found|not found"):
            load_dataset(name, data_root=tmp_path)


@pytest.mark.parametrize("name", DATASETS.names())
def test_every_data_set_declares_a_registered_default_model(name):
    from collapse_lab.models import MODELS

    assert DATASETS.info(name)["model"] in MODELS


def test_unknown_loader_options_are_refused_with_the_list():
    with pytest.raises(CollapseLabError, match="--dataset-option dimm: data set gaussian does not take it; drop it "
                                               "\\(its --dataset-option keys: dim, num_classes"):
        load_dataset("gaussian", dimm=3)
    with pytest.raises(CollapseLabError, match="--data-root: data set digits does not take it"):
        load_dataset("digits", data_root="/nowhere")
    assert load_dataset("gaussian", dim=3, train_per_class=2, test_per_class=1).train_x.shape == (20, 3)


@pytest.mark.slow
def test_core_never_imports_torchvision():
    import subprocess
    import sys

    code = ("import sys, collapse_lab.cli, collapse_lab.training.engine, collapse_lab.data; "
            "collapse_lab.data.load_dataset('digits'); print('torchvision' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_download_without_torchvision_says_where_files_go(tmp_path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_torchvision(name, *a, **k):
        if name.startswith("torchvision"):
            raise ImportError("no torchvision")
        return real_import(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_torchvision)
    with pytest.raises(CollapseLabError, match="--download needs a working torchvision.*cifar-10-batches-py"):
        load_dataset("cifar10", data_root=tmp_path, download=True)
    with pytest.raises(CollapseLabError, match="--download needs a working torchvision.*idx"):
        load_dataset("mnist", data_root=tmp_path, download=True)


def test_validation_split_is_stratified_disjoint_and_fixed():
    from collapse_lab.data import load_dataset

    full = load_dataset("digits")
    ds = load_dataset("digits", val_fraction=0.1)
    y = full.train_y.numpy()
    counts = np.bincount(y, minlength=10)
    assert np.array_equal(np.bincount(ds.test_y.numpy(), minlength=10), np.round(0.1 * counts).astype(int))
    assert len(ds.train_y) + len(ds.test_y) == len(full.train_y)
    # the two parts are the training set, row for row, and nothing of the test set
    rows = {tuple(r) for r in full.train_x.reshape(len(y), -1).tolist()}
    got = torch.cat([ds.train_x, ds.test_x]).reshape(len(y), -1)
    assert sorted(map(tuple, got.tolist())) == sorted(map(tuple, full.train_x.reshape(len(y), -1).tolist()))
    assert all(tuple(r) in rows for r in ds.test_x.reshape(len(ds.test_y), -1).tolist())
    again = load_dataset("digits", val_fraction=0.1)
    assert torch.equal(again.test_x, ds.test_x) and torch.equal(again.train_y, ds.train_y)
    with pytest.raises(CollapseLabError, match="val_fraction=1.5 must be between 0 and 1"):
        load_dataset("digits", val_fraction=1.5)


def test_stl10_official_binary_files(tmp_path):
    """Images are stored column-major (3 x 96 x 96 per image): pixel (c, h, w) is byte
    c*96*96 + w*96 + h of its image; labels are 1..10."""
    base = tmp_path / "stl10_binary"
    base.mkdir()
    rng = np.random.default_rng(0)
    for split, n in (("train", 3), ("test", 2)):
        img = rng.integers(0, 256, size=(n, 3, 96, 96), dtype=np.uint8)  # (N, C, H, W)
        raw = bytearray()
        for i in range(n):
            for c in range(3):
                for w in range(96):
                    raw += bytes(img[i, c, :, w].tolist())  # one column of height 96 after another
        (base / f"{split}_X.bin").write_bytes(bytes(raw))
        (base / f"{split}_y.bin").write_bytes(bytes([1, 10, 3][:n]))
        if split == "train":
            want = img
    (base / "class_names.txt").write_text("\n".join(f"c{i}" for i in range(10)))
    d = load_dataset("stl10", data_root=tmp_path)
    assert torch.equal(d.train_x, torch.from_numpy(want)) and d.train_y.tolist() == [0, 9, 2]
    assert d.test_x.shape == (2, 3, 96, 96) and d.class_names[0] == "c0"
    assert load_dataset("stl10", data_root=tmp_path, image_size=32).train_x.shape == (3, 3, 32, 32)
    (base / "test_y.bin").write_bytes(bytes([11, 1]))
    with pytest.raises(CollapseLabError, match="labels must be 1..10"):
        load_dataset("stl10", data_root=tmp_path)


def _leaf(path, users):
    import json

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"users": list(users), "num_samples": [len(v[1]) for v in users.values()],
                                "user_data": {u: {"x": x, "y": y} for u, (x, y) in users.items()}}))


def test_femnist_leaf_json_and_the_writer_partition(tmp_path):
    from collapse_lab.partition import PARTITIONS

    base = tmp_path / "femnist" / "data"
    px = lambda v: [[v] * 784]  # noqa: E731
    _leaf(base / "train" / "all_data_0.json", {"f0001": (px(0.0) + px(1.0), [3, 61]), "f0002": (px(0.5), [7])})
    _leaf(base / "train" / "all_data_1.json", {"f0003": (px(0.2) * 3, [1, 1, 2])})
    _leaf(base / "test" / "all_data_0.json", {"f0001": (px(1.0), [3]), "f0003": (px(0.0), [2])})
    d = load_dataset("femnist", data_root=tmp_path)
    assert d.num_classes == 62 and d.train_x.shape == (6, 1, 28, 28) and d.train_x.dtype == torch.uint8
    assert d.train_y.tolist() == [3, 61, 7, 1, 1, 2] and d.train_x[:3, 0, 0, 0].tolist() == [0, 255, 128]
    assert d.domains == ["f0001", "f0002", "f0003"] and d.train_domain.tolist() == [0, 0, 1, 2, 2, 2]
    assert d.test_domain.tolist() == [0, 2]
    p = PARTITIONS.call("natural", d.train_y.numpy(), 62, 2, np.random.default_rng(0), domains=d.train_domain.numpy())
    groups = [sorted(set(d.train_domain[torch.from_numpy(ix)].tolist())) for ix in p.client_indices]
    assert all(len(g) == 1 for g in groups) and len({g[0] for g in groups}) == 2  # a whole writer each
    assert all(len(ix) == (d.train_domain == g[0]).sum() for ix, g in zip(p.client_indices, groups))
    with pytest.raises(CollapseLabError, match="more than the 3 writers"):
        PARTITIONS.call("natural", d.train_y.numpy(), 62, 4, np.random.default_rng(0), domains=d.train_domain.numpy())


def test_pacs_and_office_home_need_their_domains(tmp_path):
    for dom, shade in (("art_painting", 40), ("cartoon", 90), ("photo", 150), ("sketch", 220)):
        for c in ("dog", "horse"):
            for j in range(5):
                _jpeg(tmp_path / "kfold" / dom / c / f"{j}.jpg", (shade, shade, shade), size=(20, 20))
    d = load_dataset("pacs", data_root=tmp_path, image_size=8)
    assert d.domains == ["art_painting", "cartoon", "photo", "sketch"] and d.class_names == ["dog", "horse"]
    assert len(d.test_y) == 8 and d.name == "pacs"
    # each domain's shade comes back in its images
    shade = d.train_x.float().mean(dim=(1, 2, 3))
    assert (shade[d.train_domain == 0].mean() < shade[d.train_domain == 3].mean())
    with pytest.raises(CollapseLabError, match="Art, Clipart, Product, Real World were not all found"):
        load_dataset("office-home", data_root=tmp_path)
    for dom in ("Art", "Clipart", "Product", "Real_World"):
        _jpeg(tmp_path / "oh" / dom / "Mug" / "0.jpg", (9, 9, 9), size=(20, 20))
        _jpeg(tmp_path / "oh" / dom / "Mug" / "1.jpg", (9, 9, 9), size=(20, 20))
    assert load_dataset("office-home", data_root=tmp_path / "oh", image_size=8).domains == [
        "Art", "Clipart", "Product", "Real_World"]


def test_ham10000_official_metadata(tmp_path):
    rows = ["lesion_id,image_id,dx,dx_type,age,sex,localization,dataset"]
    k = 0
    for src in ("rosendahl", "vidir_modern"):
        for dx, color in (("mel", (200, 0, 0)), ("nv", (0, 200, 0))):
            for j in range(5):
                img = f"ISIC_{k:07d}"
                _jpeg(tmp_path / f"HAM10000_images_part_{1 + k % 2}" / f"{img}.jpg", color, size=(30, 30))
                rows.append(f"HAM_{k},{img},{dx},histo,50,male,back,{src}")
                k += 1
    (tmp_path / "HAM10000_metadata.csv").write_text("\n".join(rows) + "\n")
    d = load_dataset("ham10000", data_root=tmp_path, image_size=8)
    assert d.class_names == ["mel", "nv"] and d.domains == ["rosendahl", "vidir_modern"]
    assert len(d.test_y) == 4 and len(d.train_y) == 16  # 1 of 5 per (source, diagnosis)
    means = d.train_x.float().mean(dim=(2, 3))
    assert torch.equal(means[:, :2].argmax(1), d.train_y)


def test_digits_domains_are_digits_under_fixed_transforms():
    base = load_dataset("digits")
    d = load_dataset("digits-domains", domains=6)
    assert d.domains == ["original", "inverted", "brighter", "blurred", "rot90", "rot180"]
    assert torch.equal(d.train_y, base.train_y) and torch.equal(d.test_y, base.test_y)
    counts = torch.bincount(d.train_domain, minlength=6)
    assert counts.max() - counts.min() <= 1  # dealt from a permutation
    x, b, dom = d.train_x[:, 0].long(), base.train_x[:, 0].long(), d.train_domain
    assert torch.equal(x[dom == 0], b[dom == 0])
    assert torch.equal(x[dom == 1], 16 - b[dom == 1])
    assert torch.equal(x[dom == 2], (b[dom == 2] + 6).clamp(max=16))
    i = int(torch.nonzero(dom == 3)[0])  # a 3x3 box blur with zero padding, by hand at one pixel
    assert int(x[i, 4, 4]) == round(float(b[i, 3:6, 3:6].double().mean()))
    assert torch.equal(x[dom == 4], torch.rot90(b[dom == 4], 1, dims=(1, 2)))
    again = load_dataset("digits-domains", domains=6)  # fixed across loads
    assert torch.equal(again.train_x, d.train_x) and torch.equal(again.test_domain, d.test_domain)
    with pytest.raises(CollapseLabError, match="2 to 6 domains"):
        load_dataset("digits-domains", domains=7)


def test_the_per_class_cap_keeps_the_lowest_content_hashes_of_each_class():
    """``max_train_per_class``/``max_test_per_class`` (the cpu preset's fixed-size CIFAR-10),
    against a hand loop over the full set: per class the n samples whose bytes have the lowest
    8-byte BLAKE2b, all of them in that hash order (docs/data-formats.md)."""
    import hashlib

    full = load_dataset("digits")
    ds = load_dataset("digits", max_train_per_class=7, max_test_per_class=3)
    for x_full, y_full, x, y, n in ((full.train_x, full.train_y, ds.train_x, ds.train_y, 7),
                                    (full.test_x, full.test_y, ds.test_x, ds.test_y, 3)):
        h = [int.from_bytes(hashlib.blake2b(x_full[i].numpy().tobytes(), digest_size=8).digest(), "little")
             for i in range(len(y_full))]
        keep = []
        for c in range(10):
            keep += sorted((i for i in range(len(y_full)) if y_full[i] == c), key=lambda i: (h[i], i))[:n]
        keep.sort(key=lambda i: (h[i], int(y_full[i])))
        assert torch.equal(y, y_full[keep]) and torch.equal(x, x_full[keep])
        assert np.bincount(y.numpy(), minlength=10).tolist() == [n] * 10
    only_train = load_dataset("digits", max_train_per_class=2)
    assert len(only_train.train_y) == 20 and torch.equal(only_train.test_y, full.test_y)
    for bad in (0, 1.5, "7", True):
        with pytest.raises(CollapseLabError, match="max_train_per_class=.*whole number >= 1"):
            load_dataset("digits", max_train_per_class=bad)
    with pytest.raises(CollapseLabError, match="max_train_per_class=1000000: class 0 has only"):
        load_dataset("digits", max_train_per_class=10**6)


def test_the_compact_copy_for_a_lent_gpu_reads_as_the_original(tmp_path):
    """docs/scale/pack_data.py: a CIFAR-10 folder re-pickled smaller for a GPU machine's 64 MiB
    working tree loads as the same images, labels and classes, with the same test hash."""
    import importlib.util
    from pathlib import Path

    from collapse_lab.analysis.features.extract import dataset_fingerprint

    spec = importlib.util.spec_from_file_location("pack_data", Path(__file__).parents[2] / "docs/scale/pack_data.py")
    pack = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pack)
    write_cifar(tmp_path / "src", "cifar10", n_per_file=200)
    assert pack.main([str(tmp_path / "src"), str(tmp_path / "dst")]) == 0
    a, b = (load_dataset("cifar10", data_root=tmp_path / d) for d in ("src", "dst"))
    assert torch.equal(a.train_x, b.train_x) and torch.equal(a.test_x, b.test_x)
    assert torch.equal(a.train_y, b.train_y) and torch.equal(a.test_y, b.test_y) and a.class_names == b.class_names
    assert dataset_fingerprint(a, "test") == dataset_fingerprint(b, "test")
    size = {d: sum(p.stat().st_size for p in (tmp_path / d / "cifar-10-batches-py").iterdir()) for d in ("src", "dst")}
    assert size["dst"] < 0.8 * size["src"]
    import tarfile

    with tarfile.open(tmp_path / "dst.tar.xz") as tar:  # the archive that travels holds the same folder
        tar.extractall(tmp_path / "unpacked", filter="data")
    c = load_dataset("cifar10", data_root=tmp_path / "unpacked")
    assert torch.equal(c.train_x, a.train_x) and torch.equal(c.test_y, a.test_y)
    assert pack.main([str(tmp_path / "nowhere"), str(tmp_path / "x")]) == 2 and not (tmp_path / "x").exists()
