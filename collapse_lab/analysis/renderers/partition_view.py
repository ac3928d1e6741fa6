"""Feature and label distribution of a federated split (FedUV Figs. 1-6): per data set and
split, a clients x classes heatmap of sample counts and each client's histogram of the
per-sample mean pixel value. No training: the data and partition registries only, with
the run seed's partition stream (what ``train`` would give the clients).

Params: ``views`` [{title, dataset, alpha, clients, seed, dataset_options}] for label skew;
with ``domains: true`` one view whose clients are four synthetic domains of digits'
training set (the catalogue's stand-in for PACS / HAM10000 / Office-Home: the original,
inverted, brightened and blurred images, one client each; digits holds no domains).

Metrics per view: ``dominated`` (share of classes with >= 90 % of their samples on one
client); for domains ``ks_between`` (smallest two-sample KS statistic of the mean-pixel
distributions between two domains) and ``ks_within`` (largest between two random halves
of one domain)."""
from __future__ import annotations

import numpy as np

from ...partition import make_partition
from .. import RENDERERS
from ..context import Context
from ...labels import alpha_label
from ..plots.style import figure, finish, palette


def dominated_share(counts: np.ndarray, share: float = 0.9) -> float:
    """The share of classes with at least ``share`` of their samples on a single client."""
    tot = counts.sum(0)
    ok = tot > 0
    return float(((counts.max(0)[ok] / tot[ok]) >= share).mean())


def ks(a: np.ndarray, b: np.ndarray) -> float:
    from scipy.stats import ks_2samp

    return float(ks_2samp(a, b).statistic)


def digit_domains(seed: int = 0):
    """Four domains of digits' training images (every image under each of the first four
    transforms of the ``digits-domains`` data set)."""
    from ...data import load_dataset
    from ...data.digits_domains import NAMES, transform

    ds = load_dataset("digits")
    x = ds.train_x.numpy().astype(np.float64)[:, 0]
    return [transform(x, name) / 16.0 for name in NAMES[:4]], ds.train_y.numpy(), ds.num_classes


class PartitionView:
    metrics = ("ks_between", "ks_within", "dominated")  # what each series' ``metrics`` holds (the claims' names)
    @staticmethod
    def compute(entry, ctx: Context) -> dict:
        from ...config import RunConfig
        from ...data import load_dataset

        p = entry.params
        panels = []
        if p.get("domains"):
            doms, y, c = digit_domains()
            counts = np.stack([np.bincount(y, minlength=c) for _ in doms])
            means = [d.reshape(len(d), -1).mean(1) for d in doms]
            rng = np.random.default_rng(0)
            within = []
            for m in means:
                perm = rng.permutation(len(m))
                within.append(ks(m[perm[: len(m) // 2]], m[perm[len(m) // 2:]]))
            between = [ks(means[i], means[j]) for i in range(len(means)) for j in range(i + 1, len(means))]
            panels.append({"title": "digits, 4 synthetic domains", "counts": counts.tolist(),
                           "hist": [m.round(4).tolist() for m in means],
                           "series": [{"label": "domains", "key": {}, "x": [], "y": [], "y_std": None, "n": 1,
                                       "metrics": {"ks_between": min(between), "ks_within": max(within)}}]})
            return {"panels": panels}
        for v in p["views"]:
            cfg = RunConfig(dataset=v["dataset"], alpha=float(v["alpha"]), clients=int(v.get("clients", 10)),
                            seed=int(v.get("seed", 0)), dataset_options=v.get("dataset_options", {}))
            ds = load_dataset(cfg.dataset, **cfg.dataset_options)
            part = make_partition(cfg, ds)
            raw = ds.train_x.flatten(1).numpy().astype(np.float64) / (ds.scale or 1.0)  # pixel values in [0, 1]
            hist = [raw[ix].mean(1).round(4).tolist() for ix in part.client_indices]
            panels.append({"title": v.get("title", f"{cfg.dataset}, {alpha_label(v['alpha'])}"), "counts": part.counts.tolist(),
                           "hist": hist,
                           "series": [{"label": v.get("title", ""), "key": {"alpha": str(v["alpha"]),
                                                                         "dataset": cfg.dataset},
                                       "x": [], "y": [], "y_std": None, "n": 1,
                                       "metrics": {"dominated": dominated_share(part.counts)}}]})
        return {"panels": panels}

    @staticmethod
    def draw(values: dict, entry):
        import seaborn as sns

        n = len(values["panels"])
        fig, axes = figure(2 * n, 2)
        for i, panel in enumerate(values["panels"]):
            ax_h, ax_c = axes[2 * i], axes[2 * i + 1]
            hist = panel["hist"]
            colors = palette(len(hist))
            for k, (h, c) in enumerate(zip(hist, colors)):
                if len(h):
                    ax_h.hist(h, bins=30, histtype="step", color=c, label=f"client {k}", density=True)
            ax_h.set_xlabel("mean pixel value of a sample")
            ax_h.set_ylabel("density")
            ax_h.set_title(panel["title"], fontsize=8)
            ax_h.legend(fontsize=5, frameon=False, ncol=2)
            sns.heatmap(np.asarray(panel["counts"]), ax=ax_c, cmap="Blues", cbar=True)
            ax_c.set_xlabel("class")
            ax_c.set_ylabel("client")
            ax_c.set_title("samples per class", fontsize=8)
        return finish(fig, "; ".join(entry.differs))


RENDERERS.register("partition_view", kind="figure")(PartitionView)
