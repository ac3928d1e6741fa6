"""Property-based tests (hypothesis) of option files, sweep specs, tags and the resolver:
whatever a user writes, the answer is a value of the right type or one CollapseLabError,
never another exception; numbers read as written; one configuration is one folder."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collapse_lab.config import RunConfig
from collapse_lab.config_files import load_mapping
from collapse_lab.errors import CollapseLabError
from collapse_lab.runspec.resolve import coerce, resolve_runs
from collapse_lab.store.paths import check_tag, child
from collapse_lab.runspec.expand import expand

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
FIELDS = ["rounds", "lr", "alpha", "seed", "clients", "beta", "reg", "method", "tag", "momentum", "batch_size",
          "keep_local", "local_eval", "dataset_options", "method_options", "min_size", "probe", "sample_fraction"]
scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20), st.floats(allow_nan=True),
                    st.text(max_size=12))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=6), inner, max_size=3)),
                      max_leaves=6)


@SETTINGS
@given(x=st.floats(min_value=1e-12, max_value=1e12), style=st.sampled_from(["{:e}", "{:E}", "{:g}", "{!r}", "{:.3e}"]))
def test_yaml_numbers_read_as_written(tmp_path, x, style):
    text = style.format(x)
    p = tmp_path / "c.yaml"
    p.write_text(f"lr: {text}\n")
    assert load_mapping(p, "--config")["lr"] == float(text)


@SETTINGS
@given(keys=st.lists(st.text(alphabet="abcdefghij_", min_size=1, max_size=6), min_size=1, max_size=5),
       dup=st.integers(0, 4), fmt=st.sampled_from(["yaml", "json"]))
def test_a_duplicate_key_is_always_refused(tmp_path, keys, dup, fmt):
    keys = keys + [keys[dup % len(keys)]]
    p = tmp_path / f"c.{fmt}"
    if fmt == "json":
        p.write_text("{" + ", ".join(f'"{k}": {i}' for i, k in enumerate(keys)) + "}")
    else:
        p.write_text("".join(f"{k}: {i}\n" for i, k in enumerate(keys)))
    with pytest.raises(CollapseLabError, match="appears twice"):
        load_mapping(p, "--config")


@SETTINGS
@given(data=st.binary(max_size=200), ext=st.sampled_from(["yaml", "json", "toml"]))
def test_any_bytes_give_a_mapping_or_one_error(tmp_path, data, ext):
    p = tmp_path / f"c.{ext}"
    p.write_bytes(data)
    try:
        out = load_mapping(p, "--config")
    except CollapseLabError as e:
        assert "\n" not in str(e)
    else:
        assert isinstance(out, dict) and all(isinstance(k, str) for k in out)
        assert "nan" not in json.dumps(out, default=str).lower().replace('"nan"', "")


@SETTINGS
@given(name=st.sampled_from(FIELDS), value=values)
def test_coerce_gives_the_field_type_or_one_error(name, value):
    try:
        v = coerce(name, value)
    except CollapseLabError as e:
        assert "\n" not in str(e)
        return
    if name in ("rounds", "seed", "clients", "batch_size", "min_size", "probe"):
        assert isinstance(v, int) and not isinstance(v, bool)
    elif name in ("lr", "beta", "momentum", "sample_fraction"):
        assert v is None or (isinstance(v, float) and math.isfinite(v))


@settings(max_examples=120, deadline=None)
@given(opts=st.dictionaries(st.sampled_from(FIELDS), values, max_size=4))
def test_the_resolver_answers_runs_or_one_error(opts):
    try:
        configs = resolve_runs({}, values={"dataset": "gaussian", **opts}, where="spec")
    except CollapseLabError as e:
        assert "\n" not in str(e)
        return
    for c in configs:
        assert isinstance(c, RunConfig)
        assert "/" not in c.run_name() and not c.run_name().startswith(".")


@SETTINGS
@given(tag=st.text(max_size=80))
def test_an_accepted_tag_names_a_folder_directly_inside_the_store(tag):
    try:
        check_tag(tag)
    except CollapseLabError:
        return
    name = RunConfig(tag=tag).run_name()
    store = Path("/store")
    assert child(store, name).parent == store and len(name.encode()) <= 255


@SETTINGS
@given(alphas=st.lists(st.floats(min_value=1e-3, max_value=1e3), min_size=1, max_size=4, unique=True),
       seeds=st.lists(st.integers(0, 10**6), min_size=1, max_size=3, unique=True))
def test_a_grid_of_distinct_values_is_one_run_per_point(alphas, seeds):
    from collapse_lab.config import alpha_str

    if len({alpha_str(a) for a in alphas}) < len(alphas):  # equal at the precision a folder name keeps
        alphas = list({alpha_str(a): a for a in alphas}.values())
    configs = expand({"base": {"dataset": "gaussian", "rounds": 1}, "grid": {"alpha": alphas}, "seeds": seeds},
                     "spec", distinct=True)
    assert len(configs) == len(alphas) * len(seeds) == len({c.run_name() for c in configs})


@SETTINGS
@given(wd=st.sampled_from([0.0, -0.0]), beta=st.sampled_from([0.0, -0.0]))
def test_negative_zero_names_the_same_folder_as_zero(wd, beta):
    (a,) = resolve_runs({}, values={"dataset": "gaussian", "weight_decay": wd, "reg": "feddecorr", "beta": beta,
                                    "alpha": 0.5})
    (b,) = resolve_runs({}, values={"dataset": "gaussian", "weight_decay": 0.0, "reg": "feddecorr", "beta": 0.0,
                                    "alpha": 0.5})
    assert a.run_name() == b.run_name()


def test_the_seedless_key_joins_the_seeds_of_one_configuration_and_nothing_else():
    """RunConfig.seedless_key: runs that differ only by their seed share it; any other field
    (alpha, a regularizer's beta, rounds) sets them apart; it is the identity less the seed."""
    import json

    from collapse_lab.config import RunConfig

    a, b = RunConfig(seed=0, alpha=0.05), RunConfig(seed=3, alpha=0.05)
    assert a.seedless_key() == b.seedless_key()
    for other in (RunConfig(seed=0, alpha=0.01), RunConfig(seed=0, alpha=0.05, beta=0.2),
                  RunConfig(seed=0, alpha=0.05, rounds=7)):
        assert other.seedless_key() != a.seedless_key()
    want = {k: v for k, v in a.identity().items() if k != "seed"}
    assert json.loads(a.seedless_key()) == json.loads(json.dumps(want, default=str))
