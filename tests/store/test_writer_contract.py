"""RunWriter cannot lose a run: every argument is checked before a file is written, and any
sequence of calls, good or bad, leaves the store readable with every complete round (or
untouched). A run from a newer collapse-lab is refused with an upgrade line, never deleted."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import collapse_lab as cl
from collapse_lab.errors import CollapseLabError
from collapse_lab.models import build_model

CFG = {"dataset": "digits", "model": "mlp", "clients": 3, "rounds": 3, "alpha": 0.5}


def _state(i: float = 0.0) -> dict:
    torch.manual_seed(0)
    return {k: v + i for k, v in build_model("mlp", 10, (1, 8, 8)).state_dict().items()}


def _listing(path) -> dict:
    out = {}
    for root, _, files in os.walk(path):
        for f in files:
            p = os.path.join(root, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, path)] = fh.read()
    return out


def _check_readable(store) -> None:
    """The invariant: every run opens, each complete round has its global model and its
    event, and no folder named round_<not a whole number> exists."""
    for run in cl.open_store(store):
        done = run.rounds_complete
        assert run.rounds == list(range(1 if 0 not in run.rounds else 0, done + 1))
        for r in range(1, done + 1):
            assert set(run.state(r)) == set(_state())
        assert [e["round"] for e in run.metrics()] == list(range(1, done + 1))
        assert all(p.name.split("_", 1)[1].isdigit() for p in run.path.glob("round_*"))


BAD_ROUNDS = [True, 2.0, 0, -1, "1", None, 1.5]
BAD_CLIENTS = [{3: _state()}, {-1: _state()}, {True: _state()}, {"0": _state()}, {0: {"w": 1.0}}, {0: {}}, [_state()]]
BAD_METRICS = [{"acc": torch.tensor([0.1, 0.2])}, {"acc": object()}, {"round": 3}, {1: 0.5}, "0.5",
               {"acc": np.zeros(3)}]


@pytest.mark.parametrize("what,call", [
    *[(f"round {r!r}", lambda w, r=r: w.write_round(r, _state())) for r in BAD_ROUNDS],
    *[(f"clients {i}", lambda w, c=c: w.write_round(1, _state(), c)) for i, c in enumerate(BAD_CLIENTS)],
    *[(f"metrics {i}", lambda w, m=m: w.write_round(1, _state(), {0: _state()}, m)) for i, m in enumerate(BAD_METRICS)],
    ("global not tensors", lambda w: w.write_round(1, {"w": [1.0]})),
    ("round 2 before 1", lambda w: w.write_round(2, _state())),
])
def test_a_bad_call_is_one_error_and_writes_nothing(tmp_path, what, call):
    w = cl.RunWriter(tmp_path / "ck", CFG)
    before = _listing(tmp_path / "ck")
    with pytest.raises(CollapseLabError) as e:
        call(w)
    assert len(str(e.value).splitlines()) == 1
    assert _listing(tmp_path / "ck") == before, what
    w.write_round(1, _state(), {0: _state(1)}, {"test_acc": torch.tensor(0.25), "n": np.int64(3)})  # then it goes on
    (ev,) = cl.open_run(w.run.path).metrics()
    assert ev["test_acc"] == 0.25 and ev["n"] == 3 and ev["clients"] == [0]


@pytest.mark.parametrize("config,kw", [
    ({**CFG, "colour": "red"}, {}), ({**CFG, "clients": 0}, {}), ({**CFG, "clients": 2.0}, {}),
    ({**CFG, "dataset": "nope"}, {}), (CFG, {"normalize": "0.5"}), (CFG, {"normalize": "a/b"}),
    (CFG, {"normalize": "0.5/0"}), (CFG, {"initial": {"w": 1}}), (CFG, {"client_sizes": [1, 2]}),
    (CFG, {"client_indices": [[0], [1]]}), ("digits", {}),
])
def test_a_bad_writer_is_one_error_and_the_store_untouched(tmp_path, config, kw):
    with pytest.raises(CollapseLabError) as e:
        cl.RunWriter(tmp_path / "ck", config, **kw)
    assert len(str(e.value).splitlines()) == 1 and not (tmp_path / "ck").exists()


def test_unstated_settings_are_null_and_what_is_given_is_recorded(tmp_path):
    w = cl.RunWriter(tmp_path / "ck", {**CFG, "lr": 0.1, "local_epochs": 2}, normalize=((0.5,), (0.25,)),
                     data_root=str(tmp_path))
    m = cl.open_run(w.close(complete=False)).meta
    assert (m["lr"], m["local_epochs"], m["momentum"], m["weight_decay"], m["batch_size"]) == (0.1, 2, None, None, None)
    assert (m["preset"], m["probe"], m["normalize"], m["data_root"], m["model_revision"]) == \
        ("external", 0, "0.5/0.25", str(tmp_path), 1)


OPS = st.one_of(
    st.tuples(st.just("round"), st.sampled_from([1, 2, 3, 4, True, 2.0, 0]),
              st.lists(st.sampled_from([0, 1, 2, 3, -1]), max_size=3),
              st.sampled_from([None, {"test_acc": 0.5}, {"t": torch.tensor(1.0)}, {"t": torch.ones(2)}, {"round": 1}])),
    st.tuples(st.just("close"), st.booleans()),
    st.tuples(st.just("reopen"), st.sampled_from([CFG, {**CFG, "seed": 1}, {**CFG, "lr": 0.5}])),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(OPS, max_size=8))
def test_any_call_sequence_leaves_a_readable_store(tmp_path_factory, ops):
    store = tmp_path_factory.mktemp("w") / "ck"
    w = cl.RunWriter(store, CFG)
    for op in ops:
        try:
            if op[0] == "round":
                _, r, clients, metrics = op
                w.write_round(r, _state(0.1), {k: _state(k) for k in clients}, metrics)
            elif op[0] == "close":
                w.close(complete=op[1] or None)
            else:
                w.close(complete=False)
                w = cl.RunWriter(store, op[1])
        except CollapseLabError as e:
            assert len(str(e).splitlines()) == 1
        _check_readable(store)
    w.close(complete=False)
    _check_readable(store)


@pytest.mark.slow
def test_a_newer_store_format_is_refused_with_an_upgrade_line_and_kept(tmp_path):
    from click.testing import CliRunner

    from collapse_lab.cli import cli

    w = cl.RunWriter(tmp_path / "ck", {**CFG, "rounds": 1})
    w.write_round(1, _state())
    path = w.close()
    meta = json.loads((path / "run.json").read_text())
    (path / "run.json").write_text(json.dumps({**meta, "format_version": "9.0"}))
    with pytest.raises(CollapseLabError, match="upgrade collapse-lab"):
        cl.RunWriter(tmp_path / "ck", {**CFG, "rounds": 1})
    # a run train made, then found in a newer format: train, even with --overwrite, says upgrade and deletes nothing
    args = ["train", "--alpha", "0.5", "--clients", "3", "--rounds", "1", "--local-epochs", "1", "--store",
            str(tmp_path / "tr")]
    assert CliRunner().invoke(cli, args).exit_code == 0
    (run,) = cl.open_store(tmp_path / "tr")
    meta = json.loads((run.path / "run.json").read_text())
    (run.path / "run.json").write_text(json.dumps({**meta, "format_version": "9.0"}))
    before = _listing(tmp_path / "tr")
    for extra in ([], ["--overwrite"]):
        res = CliRunner().invoke(cli, [*args, *extra])
        assert res.exit_code == 2 and "upgrade collapse-lab" in res.stderr, res.output
        assert "--overwrite it" not in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert _listing(tmp_path / "tr") == before


def test_closed_means_closed_and_a_complete_run_needs_extend(tmp_path):
    """Issue 47: no write after close(); a second writer on a run in the same process is
    refused; a complete run reopened takes no round unless extend=True with a longer length."""
    cfg = {**CFG, "rounds": 1}
    w = cl.RunWriter(tmp_path, cfg)
    with pytest.raises(CollapseLabError, match="already has a writer in this process"):
        cl.RunWriter(tmp_path, cfg)
    w.write_round(1, _state(), {0: _state(1)}, {"test_acc": 0.5})
    path = w.close()
    for call in (lambda: w.write_round(2, _state()), lambda: w.write_initial(_state()), lambda: w.note(x=1)):
        with pytest.raises(CollapseLabError, match="is closed"):
            call()
    meta = json.loads((path / "run.json").read_text())
    assert meta["status"] == "complete" and meta["rounds_complete"] == 1
    with pytest.raises(CollapseLabError, match="is complete with 1 round"):
        cl.RunWriter(tmp_path, cfg)
    with pytest.raises(CollapseLabError, match="already has 1"):
        cl.RunWriter(tmp_path, cfg, extend=True)
    w2 = cl.RunWriter(tmp_path, {**CFG, "rounds": 2}, extend=True)
    w2.write_round(2, _state(2))
    w2.close()
    meta = json.loads((path / "run.json").read_text())
    assert meta["status"] == "complete" and meta["rounds_complete"] == 2 and meta["rounds"] == 2


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), np.float32("nan"), torch.tensor(float("inf"))])
def test_non_finite_metrics_are_refused_and_nothing_is_written(tmp_path, bad):
    w = cl.RunWriter(tmp_path, CFG)
    before = _listing(tmp_path)
    with pytest.raises(CollapseLabError, match="not a finite number"):
        w.write_round(1, _state(), None, {"test_acc": bad})
    with pytest.raises(CollapseLabError, match="not a finite number"):
        w.write_round(1, _state(), None, {"nested": {"x": [1.0, bad]}})
    assert _listing(tmp_path) == before
    w.write_round(1, _state(), None, {"test_acc": None})  # not measured: null, which is JSON
    assert all(json.loads(line) for line in (w.run.path / "metrics.jsonl").read_text().splitlines())
    w.close()


@pytest.mark.parametrize("config,kw,msg", [
    ({**CFG, "tag": "a\u202eb"}, {}, "RunWriter config tag"),
    ({**CFG, "tag": "a\u00a0b"}, {}, "RunWriter config tag"),
    (CFG, {"name": "run\u202ename"}, "RunWriter name"),
    (CFG, {"name": "run\u00a0name"}, "RunWriter name"),
    ({**CFG, "lr": float("nan")}, {}, "RunWriter config: lr"),
    ({**CFG, "lr": 0.0}, {}, "RunWriter config: lr"),
    ({**CFG, "local_epochs": -1}, {}, "RunWriter config: local_epochs"),
    ({**CFG, "momentum": 1.0}, {}, "RunWriter config: momentum"),
    (CFG, {"normalize": "0.5,0.5,0.5/0.2,0.2,0.2"}, "has 3 values but the inputs have 1 channel"),
])
def test_what_train_refuses_a_writer_refuses(tmp_path, config, kw, msg):
    with pytest.raises(CollapseLabError, match=msg):
        cl.RunWriter(tmp_path, config, **kw)
    assert not any(tmp_path.iterdir())
