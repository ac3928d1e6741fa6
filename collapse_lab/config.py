"""Run configuration: one frozen record per training run, its folder name, presets and
config files. ``resolve.resolve_runs`` turns options into these records (preset <
data set's defaults < config file < flags).
"""
from __future__ import annotations

import copy
import dataclasses
import functools
import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from .errors import CollapseLabError

DEFAULT_ALPHAS = (0.01, 0.05, 0.25, math.inf)  # the paper's analysis settings (Sec. 3.1)


@dataclass(frozen=True)
class RunConfig:
    dataset: str = "digits"
    data_root: str | None = None
    download: bool = False
    model: str = "mlp"
    # the model's architecture revision (models.revision): set by the resolver to the current
    # one; a run stored before a model was corrected has none, which reads as 1
    model_revision: int = 1
    partition: str = "dirichlet"
    alpha: float = 0.5
    classes_per_client: int = 2
    min_size: int = 10
    clients: int = 10
    sample_fraction: float = 1.0
    method: str = "fedavg"
    method_options: dict = field(default_factory=dict)  # resolved by training.engine.prepare (paper defaults)
    reg: str = "none"
    reg_options: dict = field(default_factory=dict)
    beta: float = 0.1
    rounds: int = 20
    local_epochs: int = 10
    batch_size: int = 64
    lr: float = 0.01
    momentum: float = 0.9
    weight_decay: float = 1e-4
    seed: int = 0
    device: str = "auto"
    keep_local: str = "all"
    keep_global: str = "all"  # global checkpoints kept: all, every:N (and the last), last
    preset: str = "paper"
    eval_batch_size: int = 1024
    # Fast path. augment and precision change what is computed, so they are part of a run's
    # identity; channels_last, compile, cuda_graphs and parallel_clients change only speed
    # (and fp32 round-off).
    augment: str = "auto"  # '+'-joined steps, none, or auto = the paper's choice for the data set
    precision: str = "auto"  # fp32, bf16 (autocast), auto = bf16 on CUDA, fp32 on any CPU
    channels_last: bool = True
    compile: str = "off"  # off or a torch.compile mode (default, reduce-overhead = CUDA graphs, max-autotune)
    cuda_graphs: str = "auto"  # capture local steps as CUDA graphs (training.trainer): auto = when the method allows, on, off
    parallel_clients: int = 0  # clients trained side by side; 0 = automatic (training.fast.plan_trainer)
    local_eval: bool = False  # also evaluate every client's model on the test set (the official code does, 4x)
    probe: int = 1000  # test samples on which each round's global spectrum is logged (training.probe); 0 = none
    probe_layers: bool = False  # also every layer's measures on the probe set, global model and client 0 (issue 50)
    image_size: int | None = None
    # the input normalisation the model was trained with (data.normalize): "dataset" for
    # collapse-lab's own runs; a run recorded from other code says what it used, or "unknown"
    normalize: str = "dataset"
    dataset_options: dict = field(default_factory=dict)  # e.g. gaussian dim / num_classes
    # a partition's own options beyond the shared fields alpha, min_size, classes_per_client
    # (declared by the partition's signature; empty leaves every existing run name as it was)
    partition_options: dict = field(default_factory=dict)
    # a smoke run (``figures/tables --smoke``, config.smoke_of): the real configuration cut
    # to one round of a few local steps on a data subset; never mixed with real runs
    smoke: bool = False
    tag: str = ""

    def _as_dict(self) -> dict:
        """``dataclasses.asdict`` for this flat record: only its dict and list fields are
        copied (deeply), the rest are numbers and text; asdict's recursion over every field
        dominated expanding the catalogue's 4,000 configurations."""
        return {f.name: copy.deepcopy(v) if isinstance(v := getattr(self, f.name), (dict, list)) else v
                for f in dataclasses.fields(self)}

    def identity(self) -> dict:
        """The fields that define what a run computes (a run directory holds one identity)."""
        d = self._as_dict()
        for k in SPEED_ONLY:
            d.pop(k)
        d["alpha"] = alpha_str(self.alpha)
        return _with_moved_fields(d)

    def seedless_key(self) -> str:
        """The identity but the seed, as one sorted JSON text: the key of a configuration's
        seeds (runs that differ only by their seed share it)."""
        return json.dumps({k: v for k, v in self.identity().items() if k != "seed"}, sort_keys=True, default=str)

    def to_json(self) -> dict:
        d = self._as_dict()
        d["alpha"] = alpha_str(self.alpha)
        return d

    @staticmethod
    def from_json(d: dict) -> "RunConfig":
        d = current_form(d)
        d["alpha"] = parse_alpha(d["alpha"])
        if "normalize" not in d and d.get("recorded_by"):  # recorded from other code before format 1.3
            d["normalize"] = "unknown"
        # Runs stored before the fast path trained without augmentation, in fp32; fields
        # that are gone (``graphs``, renamed ``cuda_graphs``) are dropped.
        d.setdefault("augment", "none")
        d.setdefault("precision", "fp32")
        names = {f.name for f in dataclasses.fields(RunConfig)}
        return RunConfig(**{k: v for k, v in d.items() if k in names})

    def run_name(self) -> str:
        """``<readable>_<hash>[_<tag>]``: the readable part names data set, model, method,
        regularizer and weight, partition, clients and seed; the hash (8 hex digits of
        sha256) covers every identity field but ``rounds`` that differs from ``RunConfig``'s
        default, so two runs that train differently never share a folder (e.g.
        FedDecorr's normalization), runs that differ in length do (the longer extends the shorter),
        and a field added later with a default that keeps old behaviour changes no name."""
        base = self.legacy_run_name(tag=False)
        name = f"{base}_{self.identity_hash()}"
        return f"{name}_{self.tag}" if self.tag else name

    def identity_hash(self) -> str:
        # ``rounds`` is left out: a run of R rounds is the first R rounds of a longer one
        # (nothing in a round depends on the total), so extending a run keeps its folder.
        defaults = _default_identity()
        diff = {k: v for k, v in self.identity().items() if k not in ("tag", "rounds") and v != defaults.get(k)}
        return hashlib.sha256(json.dumps(diff, sort_keys=True).encode()).hexdigest()[:8]

    def legacy_run_name(self, tag: bool = True) -> str:
        """The folder name before the hash was added (stores written by version 0.1)."""
        if self.partition == "dirichlet":
            part = f"dir{alpha_str(self.alpha)}"
        elif self.partition == "pathological":
            part = f"path{self.classes_per_client}"
        elif self.partition == "scenes":
            part = f"scenes{self.classes_per_client}"
        else:
            part = self.partition
        reg = "none" if self.reg == "none" else f"{self.reg}{self.beta:g}"
        name = f"{self.dataset}_{self.model}_{self.method}_{reg}_{part}_K{self.clients}_s{self.seed}"
        return f"{name}_{self.tag}" if self.tag and tag else name


# Options that were RunConfig fields before their plugin declared them: regularizer ->
# option -> (the old field, its default). A run's identity still shows them as the old
# field, in the old place, so folder names, hashes and the analyses' grouping of stored runs
# stay as they were; a run.json written before the move (format 1.1) reads as the option.
MOVED_REG_OPTIONS = {"feddecorr": {"normalization": ("decorr_norm", "paper")}}
MOVED_FIELDS = {old: reg for reg, moved in MOVED_REG_OPTIONS.items() for old, _ in moved.values()}  # old field -> owner


def current_form(meta: dict) -> dict:
    """A copy of a run.json (or config) dict with the fields that moved into a plugin's
    options moved there (``MOVED_REG_OPTIONS``); dicts of the current format are unchanged."""
    d = dict(meta)
    for reg, moved in MOVED_REG_OPTIONS.items():
        for option, (old, _) in moved.items():
            if old in d:
                value = d.pop(old)
                if d.get("reg") == reg:
                    d["reg_options"] = {option: value, **(d.get("reg_options") or {})}
    return d


def _with_moved_fields(identity: dict) -> dict:
    """``identity`` with the moved options back in their old fields (after ``beta``, as before)."""
    out = {}
    for k, v in identity.items():
        out[k] = v
        if k == "beta":
            for reg, moved in MOVED_REG_OPTIONS.items():
                for option, (old, default) in moved.items():
                    own = identity["reg"] == reg and option in identity["reg_options"]
                    out[old] = identity["reg_options"][option] if own else default
    for reg, moved in MOVED_REG_OPTIONS.items():
        if identity["reg"] == reg:
            out["reg_options"] = {k: v for k, v in identity["reg_options"].items() if k not in moved}
    return out


def clients_per_round(cfg: RunConfig) -> int:
    """Participants per round: ``sample_fraction`` of the clients, at least one."""
    return min(cfg.clients, max(1, int(round(cfg.sample_fraction * cfg.clients))))


@functools.lru_cache(maxsize=1)
def _default_identity() -> dict:
    return RunConfig().identity()


SPEED_ONLY = ("device", "data_root", "download", "keep_local", "keep_global", "eval_batch_size", "channels_last", "compile",
              "local_eval", "cuda_graphs", "parallel_clients", "probe", "probe_layers")  # not part of a run's identity


def alpha_str(a: float) -> str:
    return "inf" if math.isinf(a) else f"{a:g}"


def parse_alpha(v) -> float:
    if isinstance(v, bool) or v is None or isinstance(v, (dict, list)):
        raise CollapseLabError(f"--alpha {v!r} is not a number; give a positive number or inf")
    if isinstance(v, (int, float)):
        a = float(v)
    else:
        s = str(v).strip().lower()
        try:
            a = math.inf if s in ("inf", "infinity", "iid") else float(s)
        except ValueError:
            raise CollapseLabError(f"--alpha {v!r} is not a number; give a positive number or inf") from None
        if math.isinf(a) and a < 0:
            raise CollapseLabError(f"--alpha must be > 0 (got {v}); smaller means more skew, inf means IID")
        if math.isinf(a) and s not in ("inf", "infinity", "iid", "+inf", "+infinity"):
            raise CollapseLabError(f"--alpha {v} overflows to infinity; write inf for the IID split")
    if not a > 0 or math.isnan(a):
        raise CollapseLabError(f"--alpha must be > 0 (got {v}); smaller means more skew, inf means IID")
    return a


# The paper preset's local training, common to all data sets (FedDecorr Sec. 5.1); a data
# set declares what differs where it registers (``paper=``). Data sets the papers do not
# use (digits, gaussian, mnist) get 30 rounds.
PAPER = dict(lr=0.01, momentum=0.9, batch_size=64, local_epochs=10, weight_decay=1e-4, rounds=30)
QUICK = dict(lr=0.05, momentum=0.9, batch_size=64, local_epochs=1, weight_decay=1e-4, rounds=2)  # smoke tests, CI
# Between the two: real images on a laptop's CPU in minutes a run (the catalogue's cpu runs:
# CIFAR-10 capped at 1,000 training images per class, the small CNN or ResNet-20). Fewer,
# shorter rounds than the paper's, so a larger step than its 0.01.
CPU = dict(lr=0.05, momentum=0.9, batch_size=64, local_epochs=2, weight_decay=1e-4, rounds=10)
PRESETS = ("paper", "cpu", "quick")


def smoke_of(cfg: RunConfig, keep_clients: bool = False) -> RunConfig:
    """The smoke form of a run (``figures/tables --smoke``): the same data set format,
    model, partition, method, regularizer, augmentation and precision, cut to one round of
    one local step on each client's first samples (``data.SMOKE_SAMPLES``) and a small test
    set; the split's minimum client size is waived (a few images per class cannot fill 100
    clients), the probe is off, client checkpoints are kept only where the figure reads
    them, and where it reads none two clients take part. ``smoke`` is part of the run's identity: a smoke run never shares a folder (or a
    store: ``store.paths.check_smoke``) with a real one."""
    # Where no client model is read, two clients train (each client runs the same code; a
    # paper run's 10-100 clients were most of a smoke's time).
    fraction = cfg.sample_fraction if keep_clients else min(cfg.sample_fraction, 2 / max(cfg.clients, 1))
    return dataclasses.replace(cfg, smoke=True, rounds=1, local_epochs=1, min_size=0, probe=0,
                               sample_fraction=fraction, keep_local="all" if keep_clients else "none")


def preset_values(preset: str, paper: dict | None = None) -> dict:
    """The training values of a preset; ``paper``: the data set's own paper values."""
    if preset == "paper":
        return {**PAPER, **(paper or {})}
    if preset == "quick":
        return dict(QUICK)
    if preset == "cpu":
        return dict(CPU)
    raise CollapseLabError(f"--preset {preset!r}: unknown preset; choose one of: {', '.join(PRESETS)}")


def load_config_file(path: str | Path) -> dict:
    """A ``--config`` file's options, read strictly (``config_files.load_mapping``)."""
    from .config_files import load_mapping

    return {k.replace("-", "_"): v for k, v in load_mapping(path, "--config").items()}
