"""The one configuration resolver: options -> the run configurations they ask for.

Precedence: the preset's training values < the data set's defaults (declared where it
registers: model, partition, augmentation, clients, its paper values) < the config file <
the flags. ``--alpha``, ``--seed`` and ``--classes-per-client`` (and a file's ``alphas``,
``seeds``) expand into one run each. Every option that can be checked without reading the
data is checked here, with a one-line error that names it; ``training.prepare`` adds what needs
the data (the regularizer's class-count defaults, one client per domain). ``train`` and
``bench`` both go through here; ``commands/`` only parses flags.
"""
from __future__ import annotations

import dataclasses

from ..config import DEFAULT_ALPHAS, MOVED_REG_OPTIONS, RunConfig, load_config_file, parse_alpha, preset_values
from ..data import DATASETS, GENERIC, dataset_of
from ..data_root import default_data_root
from ..devices import resolve_device
from ..errors import CollapseLabError
from ..models import MODELS
from ..models import revision as model_revision
from ..partition import PARTITIONS, RNGS, SHARED, own_options, partition_options
from ..registry import option_names
from ..store import parse_keep_global, parse_keep_local
from ..store.paths import check_name, check_tag
from . import speed
from .values import (BOOL_FIELDS, DICT_FIELDS, FLOAT_FIELDS, INT_FIELDS, LIMITS, check_values,  # noqa: F401  (the
                     coerce, flag, no_negative_zero, parse_key_values)  # resolver's API, as callers import them)
from ..augment import resolve as resolve_augment
from ..methods import METHODS
from ..regularizers import default_beta, preset_options
from ..regularizers import resolve_options as resolve_reg_options

METHOD_FLAGS = ("server_momentum", "server_lr", "gmv_warmup")  # named flags that fill method options
AXES = ("alpha", "seed", "classes_per_client")  # list-valued: one run per value
# Shorthands for options a plugin owns that were once fields of their own (``--decorr-norm X``
# is ``--reg-option normalization=X``): old field -> (regularizer, option)
MOVED = {old: (reg, option) for reg, moved in MOVED_REG_OPTIONS.items() for option, (old, _) in moved.items()}
KEY_VALUE = {"dataset_option": ("dataset_options", "dim=64"), "method_option": ("method_options", "mu=0.01"),
             "reg_option": ("reg_options", "groups=8"), "partition_option": ("partition_options", "shards=2")}

KEY_VALUE_FIELDS = tuple(field for field, _ in KEY_VALUE.values())


def resolve_runs(flags: dict, config_file: str | None = None, values: dict | None = None,
                 where: str | None = None, carried=None, data: str = "require",
                 data_root: str | None = None) -> list[RunConfig]:
    """``flags``: the options the user gave (unset ones absent), named as ``RunConfig``'s
    fields, ``alpha``/``seed``/``classes_per_client`` as lists, ``dataset_option``/
    ``method_option``/``reg_option`` as lists of KEY=VALUE and the ``METHOD_FLAGS``.
    ``config_file`` or ``values`` (a mapping as a config file holds it, e.g. one point of a
    sweep; ``where`` names its origin in messages) sit below the flags. ``carried``: a
    callback for options that have no effect in a combination a sweep's grid makes
    (``_no_effect``): reported to it and reset instead of refused. ``data``: ``require``
    (train, sweep: a data set that cannot be read is an error) or ``if-present`` (the
    catalogue's plans: the data-dependent values are filled in where the data are here).
    ``data_root``: the command's ``--data-root``, for runs that name none (then the
    environment and the user config file: ``data_root.default_data_root``)."""

    fields = {f.name for f in dataclasses.fields(RunConfig)}
    file_values, origin, where = _file_values(config_file, values, where, fields)
    given = {**file_values, **{k: v for k, v in flags.items() if k in fields and k not in AXES}}
    values, info = _values(given, flags, file_values, data_root)
    moved = {old: flags[old] if flags.get(old) is not None else file_values[old]
             for old in MOVED if flags.get(old) is not None or old in file_values}
    for old, v in moved.items():
        values["reg_options"][MOVED[old][1]] = v
    if values.get("beta") is None:  # the regularizer's own default (FedDecorr 0.1, FedUV 1)
        values["beta"] = default_beta(values.get("reg", "none"))
    alphas = [parse_alpha(a) for a in _axis(flags, file_values, "alpha", "alphas", DEFAULT_ALPHAS, origin)]
    seeds = [coerce("seed", s_, where) for s_ in _axis(flags, file_values, "seed", "seeds", [0], origin)]
    cpcs = [coerce("classes_per_client", m, where)
            for m in _axis(flags, file_values, "classes_per_client", None, [RunConfig.classes_per_client], origin)]
    explicit = set(given) | set(moved) | {k for k in AXES if flags.get(k)} | {k for k in AXES if k in file_values} | (
        {"alpha"} if file_values.get("alphas") is not None else set()) | (
        {"seed"} if file_values.get("seeds") is not None else set())
    for name in _no_effect(values, explicit, info, carried):
        if name == "alpha":
            alphas = list(DEFAULT_ALPHAS[:1])  # what train stores for a partition without alpha
        elif name == "classes_per_client":
            cpcs = [RunConfig.classes_per_client]
        else:
            _reset(values, name)
    # the option values the regularizer declares for the preset, below the user's (FedDecorr's
    # released scaling at --preset paper)
    values["reg_options"] = {**preset_options(values.get("reg", "none"), values.get("preset", "paper")),
                             **values["reg_options"]}
    if "alpha" not in partition_options(values["partition"]):
        alphas = alphas[:1]  # stored as the partition's (unused) alpha, as before
    if "classes_per_client" not in partition_options(values["partition"]):
        cpcs = cpcs[:1]
    return [_config(values, fields, a, seed, m, data) for seed in seeds for a in alphas for m in cpcs]


def _file_values(config_file, values, where, fields) -> tuple[dict, str, str]:
    """The config file's (or a sweep point's) options, coerced; the origin named in messages
    and the prefix of a coerced value's error."""
    file_values = load_config_file(config_file) if config_file else {k.replace("-", "_"): v
                                                                      for k, v in (values or {}).items()}
    unknown = sorted(set(file_values) - fields - {"alphas", "seeds", *METHOD_FLAGS, *MOVED})
    origin = where or (f"--config {config_file}" if config_file else "the options")
    if unknown:
        raise CollapseLabError(f"{origin}: unknown option(s) {', '.join(unknown)}; use the names of the train options")
    prefix = f"{origin}: " if (config_file or where) else ""
    file_values = {k: (v if k in ("alphas", "seeds", *AXES, *METHOD_FLAGS, *MOVED) else coerce(k, v, prefix))
                   for k, v in file_values.items()}
    return file_values, origin, prefix


def _values(given: dict, flags: dict, file_values: dict, data_root) -> tuple[dict, dict]:
    """The options of the runs before their axes: the data set's defaults < the preset's <
    what was given; the data root, the data set's client count, the KEY=VALUE options."""
    dataset = given.get("dataset", "digits")
    info = DATASETS.info(dataset)
    values: dict = {"dataset": dataset, "model": info["model"], "partition": info.get("partition", "dirichlet")}
    preset = given.get("preset", "paper")
    values.update(preset_values(preset, info.get("paper")))
    # --preset cpu: what the data set declares for a CPU (cifar10: the small CNN and the
    # catalogue's caps of 1,000 training and 200 test images a class), below what is given
    own = dict(info.get("cpu") or {}) if preset == "cpu" else {}
    values.update({k: v for k, v in own.items() if k not in KEY_VALUE_FIELDS})
    values.update(given)
    if values.get("data_root") is None and "data_root" in option_names(DATASETS.get(dataset)):
        values["data_root"] = default_data_root(data_root)[0]  # --data-root of the command, $COLLAPSE_LAB_DATA, user config
    if "clients" in info and "clients" not in given and values["partition"] == info.get("partition"):
        values["clients"] = info["clients"]  # e.g. one client per domain, counted when the data are read
    for opt, (field, example) in KEY_VALUE.items():
        values[field] = {**own.get(field, {}), **file_values.get(field, {}),
                         **parse_key_values(flags.get(opt, ()), f"--{opt.replace('_', '-')}", example)}
    values["method_options"].update({k: file_values[k] for k in METHOD_FLAGS if k in file_values})
    values["method_options"].update({k: flags[k] for k in METHOD_FLAGS if flags.get(k) is not None})
    return values, info


def _reset(values: dict, name: str) -> None:
    """An option without effect in this combination (``_no_effect``) back to its default."""
    if name == "beta":
        values["beta"] = default_beta(values.get("reg", "none"))
    elif name in MOVED:
        values["reg_options"].pop(MOVED[name][1], None)
    elif name == "reg_options":
        values["reg_options"] = {}
    else:
        values[name] = getattr(RunConfig, name)


def _config(values: dict, fields: set, alpha, seed, cpc, data: str) -> RunConfig:
    v = {k: x for k, x in dict(values, alpha=alpha, seed=int(seed), classes_per_client=int(cpc)).items() if k in fields}
    try:
        cfg = RunConfig(**v)
    except TypeError as e:
        raise CollapseLabError(f"bad configuration: {e}") from None
    return finalize(cfg, data)


def finalize(cfg: RunConfig, data: str = "require", dataset=None) -> RunConfig:
    """The one place a run configuration becomes final: every check of ``check_config``,
    then what needs the data set: the regularizer's class-count defaults (structured-decov's
    groups, FedUV's lambda), one client per domain for a domain split, and the checks that
    need the data (no more clients than samples; image augmentation on images). Idempotent;
    the engine, the sweep, the bench and the analyses take the record as it leaves here.
    ``dataset``: the data set itself, when it is not one of the registry's (tests, the bench)."""
    cfg = check_config(cfg)
    try:
        ds = dataset if dataset is not None else dataset_of(cfg)
    except CollapseLabError:
        if data == "require":
            raise
        return cfg  # the analyses' plan of a run whose data are not here: it is missing anyway
    return with_data(cfg, ds.num_classes, len(ds.domains), len(ds.train_y), ds.input_shape)


def with_data(cfg: RunConfig, num_classes: int, domains: int = 0, samples: int | None = None,
              input_shape: tuple | None = None) -> RunConfig:
    """The data-dependent part of ``finalize``, from the data set's facts (the bench, whose
    synthetic CIFAR-10 is not in the registry, gives them itself)."""
    if cfg.partition == "domain" and cfg.clients == 0:
        cfg = dataclasses.replace(cfg, clients=max(domains, 1))
    cfg = dataclasses.replace(cfg, reg_options=resolve_reg_options(cfg.reg, dict(cfg.reg_options), num_classes))
    if samples is not None and cfg.clients > samples:
        raise CollapseLabError(f"--clients {cfg.clients} is more than the {samples} training samples of "
                               f"{cfg.dataset}; use fewer clients")
    if input_shape is not None and cfg.augment != "none" and len(input_shape) != 3:
        raise CollapseLabError(f"--augment {cfg.augment}: {cfg.dataset} samples have shape {input_shape}, not "
                               "images (C, H, W); use --augment none")
    return cfg


def _no_effect(values: dict, explicit: set, info: dict, carried=None) -> list[str]:
    """An option given that changes nothing in this combination is an error, not a silent
    part of the run's identity. ``carried`` (a sweep, whose grid crosses e.g. alpha with a
    pathological partition legitimately): the partition's and regularizer's options are
    instead reported to it and returned, to be reset to their defaults."""

    partition, reg = values["partition"], values.get("reg", "none")
    takes = partition_options(partition)
    problems = []
    for name in ("alpha", "min_size", "classes_per_client"):
        if name in explicit and name not in takes:
            problems.append((name, f"{flag(name)} has no effect with --partition {partition} (it takes "
                                   f"{', '.join(flag(t) for t in takes if t != 'domains') or 'no option'})"))
    if "beta" in explicit and reg == "none":
        problems.append(("beta", "--beta has no effect without a regularizer (--reg none)"))
    for old, (owner, option) in MOVED.items():
        if old in explicit and reg != owner:
            problems.append((old, f"{flag(old)} has no effect with --reg {reg} (it is {owner}'s option {option})"))
    own = set(values.get("reg_options") or {}) - {MOVED[o][1] for o in explicit if o in MOVED}  # not said above
    if carried is not None and reg == "none" and own:  # a grid crossing reg with none
        problems.append(("reg_options", "--reg-option has no effect without a regularizer (--reg none)"))
    if problems and carried is None:
        name, msg = problems[0]
        raise CollapseLabError(msg + ("; drop it or choose a --reg" if name == "beta" else "; drop it"))
    for _, msg in problems:
        carried(msg + "; left at its default for these runs")
    loader = option_names(DATASETS.get(values["dataset"]))
    for name in ("data_root", "image_size"):
        if name in explicit and values.get(name) is not None and name not in loader:
            raise CollapseLabError(f"{flag(name)} has no effect on --dataset {values['dataset']}; drop it")
    if values.get("download") and "download" not in loader:
        raise CollapseLabError(f"--download has no effect on --dataset {values['dataset']} (nothing to fetch); drop it")
    unknown = sorted(set(values.get("dataset_options", {})) - set(loader) - {"data_root", "download", "image_size", *GENERIC})
    if unknown:
        own = [k for k in loader if k not in ("data_root", "download", "image_size")] + list(GENERIC)
        raise CollapseLabError(f"--dataset-option {unknown[0]}: data set {values['dataset']} has no such option"
                               f"; its keys: {', '.join(own)}")
    return [name for name, _ in problems]


def _axis(flags: dict, file_values: dict, name: str, plural: str | None, default, origin: str = "the options") -> list:
    for key in (name, plural):  # null is not "leave it out": the default grid would train instead
        if key and key in file_values and file_values[key] is None and not flags.get(name):
            raise CollapseLabError(f"{origin}: {key}: null; give a value (e.g. {key}: "
                                   f"{'[0.05, inf]' if key == 'alphas' else '0.05' if key == 'alpha' else '0'}) "
                                   "or leave the key out for the default")
    if flags.get(name):
        v = flags[name]
    elif plural and file_values.get(plural) is not None:
        v = file_values[plural]
    elif file_values.get(name) is not None:
        v = file_values[name]
    else:
        v = default
    return list(v) if isinstance(v, (list, tuple)) else [v]


def check_config(cfg: RunConfig) -> RunConfig:
    """Names, ranges and options that can be checked without the data; returns ``cfg``
    with the precision resolved for its device."""

    check_values(cfg)
    check_tag(cfg.tag)
    MODELS.get(cfg.model)  # a name not in a registry is said as such, before it makes a folder name too long
    METHODS.get(cfg.method)
    cfg = no_negative_zero(cfg)
    # the derived values of the record itself: the method's defaults, the data set's augmentation
    cfg = dataclasses.replace(
        cfg, model_revision=model_revision(cfg.model),
        method_options=METHODS.get(cfg.method).resolve_options(dict(cfg.method_options), cfg),
        augment=resolve_augment(cfg.augment, DATASETS.info(cfg.dataset).get("augment", "none")))
    resolve_reg_options(cfg.reg, dict(cfg.reg_options))
    MODELS.get(cfg.model)
    PARTITIONS.get(cfg.partition)
    own = own_options(cfg.partition)
    for k in cfg.partition_options:
        if k in SHARED:
            raise CollapseLabError(f"--partition-option {k}: give it as {flag(k)}")
        if k not in own:
            raise CollapseLabError(f"--partition-option {k}: partition {cfg.partition} has no such option; its options: "
                                   f"{', '.join(own) or 'none'}")
    if cfg.partition_options.get("rng", "default") not in RNGS:
        raise CollapseLabError(f"--partition-option rng={cfg.partition_options['rng']!r}: use default (collapse-lab's "
                               "own stream) or released (the released codes' np.random.seed stream)")
    parse_keep_local(cfg.keep_local)
    parse_keep_global(cfg.keep_global)
    check_name(cfg.run_name(), "the run folder name")
    device = resolve_device(cfg.device)
    speed.check_speed(cfg, device)
    return dataclasses.replace(cfg, precision=speed.resolve_precision(cfg.precision, device))
