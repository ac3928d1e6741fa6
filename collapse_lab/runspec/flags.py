"""The options of a training run as ``train`` names them, declared once: each flag's type,
whether it repeats, the plugin registry whose names its help lists, and its help. The
command line builds its options from this table and the resolver (``runspec.resolve``) reads
the values under the same names; Python's ``collapse_lab.train`` names them as a config file
does (``alphas``, ``method_options``)."""
from __future__ import annotations

import importlib

FLAG, SWITCH, KEY_VALUE = "flag", "switch", "KEY=VALUE"  # kinds beyond str/int/float

# flag -> (type, repeatable, registry or None, help)
FLAGS: dict[str, tuple] = {
    "--dataset": (str, False, "dataset", "Data set (default digits)."),
    "--download": (FLAG, False, None, "Download mnist/cifar with torchvision (needs the optional extra)."),
    "--dataset-option": (KEY_VALUE, True, None, "Loader option, e.g. dim=64 for gaussian (repeatable)."),
    "--image-size": (int, False, None, "Resize images (tinyimagenet, domains)."),
    "--model": (str, False, "model", "Model (default: the data set's)."),
    "--partition": (str, False, "partition", "Client partition (default dirichlet)."),
    "--alpha": (str, True, None, "Dirichlet concentration (repeatable; inf = IID). Default: 0.01 0.05 0.25 inf."),
    "--classes-per-client": (int, True, None, "M, the classes per client of the pathological and scenes partitions "
                                              "(repeatable; 2)."),
    "--min-size": (int, False, None, "Fewest samples per client (Dirichlet; 10)."),
    "--partition-option": (KEY_VALUE, True, None, "An option the partition declares beyond --alpha/--min-size/"
                                                  "--classes-per-client (repeatable)."),
    "--clients": (int, False, None, "Number of clients (10)."),
    "--sample-fraction": (float, False, None, "Share of clients per round (1)."),
    "--method": (str, False, "method", "Federated method (default fedavg)."),
    "--method-option": (KEY_VALUE, True, None, "Method option, e.g. mu=0.01 (fedprox, moon), tau=0.5 (moon), "
                                               "gmv_weight=1 (fedetf) (repeatable)."),
    "--server-momentum": (float, False, None, "fedavgm: server momentum (paper 0.5)."),
    "--server-lr": (float, False, None, "fedavgm, scaffold: server learning rate (1.0)."),
    "--gmv-warmup": (int, False, None, "fedetf: first round using the memory vectors (half the rounds)."),
    "--reg": (str, False, "reg", "Regularizer on z (default none)."),
    "--reg-option": (KEY_VALUE, True, None, "Regularizer option, e.g. groups=8 (structured-decov), mu=0.5 lam=2.5 "
                                            "(feduv) (repeatable)."),
    "--beta": (float, False, None, "Regularizer weight (Eq. 9); default 0.1, feduv 1."),
    "--decorr-norm": (str, False, None, "FedDecorr scaling, short for --reg-option normalization=...: official (the "
                                        "released code's, which produced the papers' numbers; default at --preset "
                                        "paper) or paper (Eq. 8 as printed; default at --preset quick). See "
                                        "docs/conventions.md."),
    "--rounds": (int, False, None, "Communication rounds (paper preset: 100 CIFAR, 50 TinyImageNet, 300 domains, 30 "
                                   "otherwise)."),
    "--local-epochs": (int, False, None, "Local epochs per round (paper 10)."),
    "--batch-size": (int, False, None, "Local batch size (64)."),
    "--lr": (float, False, None, "Local SGD learning rate (paper 0.01)."),
    "--momentum": (float, False, None, "Local SGD momentum (0.9)."),
    "--weight-decay": (float, False, None, "Local weight decay (paper 1e-5 CIFAR-10, 1e-4 otherwise)."),
    "--seed": (int, True, None, "Run seed (repeatable; 0)."),
    "--augment": (str, False, "augment", "Batched on-device augmentation: auto (the paper's for the data set; "
                                         "default), none, or steps joined by '+'."),
    "--channels-last": (SWITCH, False, None, "channels_last memory format for image models (on; speed only)."),
    "--compile": (str, False, None, "torch.compile the model: off (default), default, reduce-overhead, max-autotune "
                                    "(speed only)."),
    "--cuda-graphs": (str, False, None, "Capture each local step as a CUDA graph: auto (default: on CUDA when the "
                                        "method's local training is plain SGD and the regularizer allows), on, off "
                                        "(speed only)."),
    "--parallel-clients": (int, False, None, "Clients trained at once (0, default: 5 on CUDA with graphs, one per "
                                             "intra-op thread on the CPU for fedavg/fedavgm/fednova/fedbn, else 1; "
                                             "speed only)."),
    "--local-eval": (FLAG, False, None, "Also evaluate every client's model on the test set after local training."),
    "--probe": (int, False, None, "Test samples on which each round's global-model spectrum is logged to "
                                  "metrics.jsonl (1000; 0: none; no effect on what trains)."),
    "--probe-layers": (FLAG, False, None, "Also log every layer's effective rank, n above tau and participation "
                                            "ratio on the probe set, for the global model and client 0, each round "
                                            "(no effect on what trains)."),
    "--keep-local": (str, False, None, "Client checkpoints to keep: all (default), last, none, every:N"),
    "--keep-global": (str, False, None, "Global checkpoints to keep: all (default: every round and round 0), every:N "
                                        "(rounds 0, N, 2N, ... and the last), last"),
    "--preset": (str, False, None, "paper (Sec. 5.1 settings; default), cpu (10 rounds of 2 local epochs at lr 0.05: "
                                   "real images on a CPU) or quick (2 short rounds)."),
    "--tag": (str, False, None, "Suffix for the run folder names."),
}

_REGISTRIES = {"dataset": ("collapse_lab.data", "DATASETS"), "model": ("collapse_lab.models", "MODELS"),
               "partition": ("collapse_lab.partition", "PARTITIONS"), "method": ("collapse_lab.methods", "METHODS"),
               "reg": ("collapse_lab.regularizers", "REGULARIZERS"), "augment": ("collapse_lab.augment", "STEPS")}


def registry(kind: str):
    """The registry of a plugin kind, imported when asked for (help, errors)."""
    module, name = _REGISTRIES[kind]
    return getattr(importlib.import_module(module), name)


def field_of(flag: str) -> str:
    """The name a flag's value travels under (``--dataset-option`` -> ``dataset_option``)."""
    return flag[2:].replace("-", "_")
