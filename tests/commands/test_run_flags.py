"""The run's options are declared once (``runspec.flags``): every flag of the table names a
value the resolver reads, and the command line parses each with the table's type into what
the resolver turns into the run's configuration."""
from __future__ import annotations

import dataclasses

from collapse_lab.commands.train import train
from collapse_lab.config import RunConfig
from collapse_lab.runspec.flags import FLAGS, field_of
from collapse_lab.runspec.resolve import AXES, KEY_VALUE, METHOD_FLAGS, MOVED, resolve_runs


def test_every_flag_of_the_table_is_a_name_the_resolver_reads():
    fields = {f.name for f in dataclasses.fields(RunConfig)}
    known = fields | set(AXES) | set(KEY_VALUE) | set(METHOD_FLAGS) | set(MOVED)
    assert [f for f in FLAGS if field_of(f) not in known] == []
    # and the other way: a setting of RunConfig the user chooses has one flag (here or shared)
    shared = {"data_root", "device", "precision"}  # declared once for every command (commands.options, .common)
    derived = {"eval_batch_size", "model_revision", "normalize", "smoke"}  # set by collapse-lab, never by a flag
    keyed = {field for field, _ in KEY_VALUE.values()}  # --dataset-option etc.
    assert fields - {field_of(f) for f in FLAGS} == shared | derived | keyed


def test_the_command_line_parses_each_kind_into_the_runs_configuration():
    ctx = train.make_context("train", ["--clients", "3", "--alpha", "0.1", "--alpha", "inf", "--lr", "0.02",
                                       "--method", "fedprox", "--method-option", "mu=0.1", "--no-channels-last",
                                       "--local-eval", "--seed", "4", "--rounds", "2"])
    p = ctx.params
    assert (p["clients"], p["alpha"], p["lr"], p["method_option"], p["channels_last"], p["local_eval"]) == (
        3, ("0.1", "inf"), 0.02, ("mu=0.1",), False, True)
    assert p["download"] is False and p["probe_layers"] is False and p["compile"] is None  # not given
    flags = {k: v for k, v in p.items() if k in ("clients", "alpha", "lr", "method", "method_option", "channels_last",
                                                 "local_eval", "seed", "rounds")}
    configs = resolve_runs(flags, data="if-present")
    assert [(c.alpha, c.clients, c.lr, c.method, c.method_options["mu"], c.channels_last, c.local_eval, c.seed,
             c.rounds) for c in configs] == [(0.1, 3, 0.02, "fedprox", 0.1, False, True, 4, 2),
                                             (float("inf"), 3, 0.02, "fedprox", 0.1, False, True, 4, 2)]


def test_a_plugin_flags_help_lists_its_registry():
    from collapse_lab.methods import METHODS
    from collapse_lab.regularizers import REGULARIZERS

    ctx = train.make_context("train", [])
    for registry, flag in ((METHODS, "--method"), (REGULARIZERS, "--reg")):
        option = next(p for p in train.params if flag in getattr(p, "opts", ()))
        assert option.get_help_record(ctx)[1] == f"{FLAGS[flag][3]} One of: {registry.help()}."
        assert option.help == FLAGS[flag][3]  # the registry's names are added only while help is shown
