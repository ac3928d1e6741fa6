"""``train --probe-layers --log tensorboard DIR --log wandb DIR`` (issue 50 item 3): what
TensorBoard's and W&B's offline writers wrote, read back, equals metrics.jsonl: each round's
per-layer measures as scalars and the layer x round heatmap as an image each round.

TensorBoard's events are read with its own ``EventAccumulator``. W&B 0.31 has no public
reader of an offline run (wandb/wandb#1768; a LocalApi is proposed in #12745): its
``run-<id>.wandb`` file is W&B's record log (LevelDB's log framing: 32 KiB blocks, records
of a 7-byte header: CRC-32 of type and data, length, type), each record one of W&B's own
protobuf ``Record`` messages (``wandb.proto.wandb_internal_pb2``); ``_wandb_records``
reads the framing, checks every CRC, and leaves the parsing to W&B's message classes."""
from __future__ import annotations

import json
import math
import struct
import zlib

import pytest
from click.testing import CliRunner

pytest.importorskip("tensorboard")
pytest.importorskip("wandb")

from collapse_lab.cli import cli  # noqa: E402
from collapse_lab.store import find_runs  # noqa: E402

pytestmark = pytest.mark.slow  # trains a run with two live logs


def _wandb_records(path):
    from wandb.proto import wandb_internal_pb2 as pb

    data, pos, block, out, part = path.read_bytes(), 7, 32768, [], b""
    assert data[:4] == b":W&B"
    while pos + 7 <= len(data):
        if block - pos % block < 7:  # a block's tail too short for a header is padding
            pos += block - pos % block
            continue
        crc, n, kind = struct.unpack("<IHB", data[pos:pos + 7])
        if kind == 0:
            break
        body = data[pos + 7:pos + 7 + n]
        assert zlib.crc32(bytes([kind]) + body) == crc
        part, pos = part + body, pos + 7 + n
        if kind in (1, 4):  # a full record, or the last piece of one
            rec = pb.Record()
            rec.ParseFromString(part)
            out.append(rec)
            part = b""
    return out


def _wandb_history(folder):
    (path,) = folder.glob("wandb/offline-run-*/run-*.wandb")
    records = _wandb_records(path)
    run = next(r.run for r in records if r.WhichOneof("record_type") == "run")
    rows = {}
    for r in records:
        if r.WhichOneof("record_type") == "history":
            row = {i.key or "/".join(i.nested_key): json.loads(i.value_json) for i in r.history.item}
            rows.setdefault(int(row["_step"]), {}).update(row)
    return run, rows


def test_live_logs_read_back_equal_the_metrics_file(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    store = tmp_path / "ck"
    res = CliRunner().invoke(cli, ["train", "--alpha", "0.1", "--rounds", "3", "--clients", "3", "--local-epochs", "2",
                                   "--probe", "200", "--probe-layers", "--store", str(store),
                                   "--log", "tensorboard", str(tmp_path / "tb"), "--log", "wandb", str(tmp_path / "wb")])
    assert res.exit_code == 0, res.output
    tb_dir, wb_dir = tmp_path / "tb", tmp_path / "wb"  # train says where its logs went and how to see them
    assert f"logs: TensorBoard event files in {tb_dir}/<run>; view them with: tensorboard --logdir {tb_dir}" in res.stderr
    assert f"wandb sync {wb_dir}/wandb/offline-run-*" in res.stderr and list(wb_dir.glob("wandb/offline-run-*"))
    (run,) = find_runs(store)
    events = run.metrics()
    layers = [e for e in events if e["event"] == "probe_layers"]
    assert {(e["round"], e["model"]) for e in layers} == {(0, "global"), *((r, m) for r in (1, 2, 3)
                                                                         for m in ("global", "client_0"))}
    tb = EventAccumulator(str(tmp_path / "tb" / run.path.name), size_guidance={"scalars": 0, "images": 0})
    tb.Reload()
    wb_run, wb = _wandb_history(tmp_path / "wb")
    assert wb_run.display_name == run.path.name and wb_run.project == "collapse-lab"
    checked = 0
    for e in layers:
        for layer, v in e["layers"].items():
            for m in ("effective_rank", "n_significant", "participation_ratio"):
                tag = f"layers/{e['model']}/{layer}/{m}"
                got = {s.step: s.value for s in tb.Scalars(tag)}  # float32 in the event file
                assert math.isclose(got[e["round"]], v[m], rel_tol=1e-6), (tag, e["round"])
                assert wb[e["round"]][tag] == v[m]  # W&B keeps the JSON number
                checked += 1
    assert checked == 7 * 3 * len(layers[0]["layers"])
    # the heatmap: an image each round (the first also covers round 0), in both logs
    assert [i.step for i in tb.Images("layers/effective_rank")] == [1, 2, 3]
    assert all(i.width > 100 and i.height > 100 for i in tb.Images("layers/effective_rank"))
    images = {s: row["layers/effective_rank/path"] for s, row in wb.items() if "layers/effective_rank/path" in row}
    assert sorted(images) == [1, 2, 3]
    assert all(next((tmp_path / "wb").glob(f"wandb/offline-run-*/files/{p}")).stat().st_size > 1000
               for p in images.values())
    # the round's other numbers: test accuracy; a client's local loss is its last epoch's in W&B
    for e in (e for e in events if e["event"] == "round"):
        assert wb[e["round"]]["global/test_acc"] == e["test_acc"]
    last = [e for e in events if e["event"] == "local_epoch" and e["epoch"] == 2]
    assert len(last) == 3 * 3 and all(wb[e["round"]][f"client_{e['client']}/loss"] == e["loss"] for e in last)


def test_an_online_wandb_log_without_a_key_is_refused_before_training(tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "online")
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.netrc
    monkeypatch.setenv("NETRC", str(tmp_path / "none"))
    res = CliRunner().invoke(cli, ["train", "--rounds", "1", "--store", str(tmp_path / "ck"), "--log", "wandb",
                                   str(tmp_path / "wb")])
    assert res.exit_code == 2 and res.output.count("\n") == 1, res.output
    assert "--log wandb: WANDB_MODE=online needs an API key" in res.output
    assert not (tmp_path / "ck").exists() and not (tmp_path / "wb").exists()
