"""What ``figures`` and ``tables`` share: their options, which runs the chosen entries need
(each once), training the missing ones through ``sweep.service`` with the data checked
first, ``--list``, ``--dry-run`` and the smoke store."""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import click

from ..errors import CollapseLabError
from ..store.naming import in_stored_precisions
from .overrides import describe, given_overrides, set_option
from .common import check_time_limit, data_root_option, given_data_root, given_precision, precision_line, \
    precision_option, time_limit_option


# from keeping least to keeping most (``wider``)
GLOBAL_ORDER, LOCAL_ORDER = ("last", "every", "all"), ("none", "last", "every", "all")


def wider(a: str, b: str, order: tuple) -> str:
    """The retention that keeps what either of ``a`` and ``b`` keeps (two every:N that
    differ: all)."""
    ka, kb = order.index(a.split(":")[0]), order.index(b.split(":")[0])
    if a != b and ka == kb == order.index("every"):
        return "all"
    return a if ka >= kb else b


@dataclass
class Session:
    """What ``figures`` and ``tables`` share once their runs are planned and trained: the
    entries, each one's run names (or why it is not available), the training failures, the
    analysis context over the store, and the times."""
    entries: list
    per_entry: dict
    failed: list
    ctx: object
    out: Path
    say: object
    t0: float
    t_train: float


def begin(kind: str, names, preset: str, store: str, out: str, o: dict, flags: dict) -> Session | None:
    """The part of ``figures``/``tables`` before rendering: option checks, the entries of
    ``kind``, ``--dry-run`` and ``--list`` (handled here: None), the smoke store, the plan,
    the first line, training the missing runs (tables --smoke drops their checkpoints) and
    the context. ``o``: the catalogue options (``catalogue_options``); ``flags``: the
    command's own options that conflict with --list or --no-train."""
    from ..analysis.catalogue import pick
    from ..plan import context

    check_training(o["workers"], o["stack"], o["backend"], o["address"], o["list_"], o["no_train"],
                   **{**flags, "--dry-run": o["dry_run_"], "--time-limit": o["time_limit"]})
    if o["dry_run_"] and o["time_limit"]:
        raise CollapseLabError("--time-limit has no effect with --dry-run (nothing trains); drop it")
    entries = pick(names, kind[:-1])
    if o["dry_run_"]:
        return dry_run(entries, o["smoke"], o["as_json"], None, o["keep"], presets=_given_presets(preset))
    store, out = smoke_paths(o["smoke"], store, out, kind)
    say = (lambda m: click.echo(m if m.startswith(kind) else f"{kind}: {m}", err=True))
    runs = command_plan(preset, o["smoke"])
    if runs.overrides:  # a render with --set lives beside the default one, never over it
        from ..analysis.claims_file import override_folder

        out = out / override_folder(runs.overrides)
    notes: list[str] = []  # said after the first line, which names the precision
    configs, per_entry, by_name = plan(entries, runs, store, lambda m: None, o["keep"], note=notes.append)
    if o["list_"]:
        return list_entries(entries, per_entry, store, out, by_name, o["as_json"],
                            **({"suffix": "md"} if kind == "tables" else {}))
    say(f"{len(configs)} run(s) for {len(entries)} entr{'y' if len(entries) == 1 else 'ies'}, precision "
        f"{precision_line(configs, auto=given_precision() is None)}")
    for n in notes:
        say(n)
    t0 = time.time()
    failed = [] if o["no_train"] else train_entries(
        configs, store, o["backend"], o["workers"], o["stack"], o["address"], say, "figures " if kind == "figures"
        else "", drop_checkpoints=o["smoke"] and kind == "tables", time_limit=o["time_limit"])
    stop_if_late(failed, say)
    ctx = context(store, preset, o["smoke"], runs.data_root, runs.precision, runs.overrides, plan=runs)
    return Session(entries, per_entry, failed, ctx, out, say, t0, time.time() - t0)


def command_plan(preset: str, smoke: bool = False):
    """The command's plan of runs (``collapse_lab.plan.Plan``): its preset, --smoke,
    --data-root, --precision and --set; one per command, shared by planning, training and
    rendering."""
    from ..plan import Plan

    return Plan(preset, smoke, given_data_root(), given_precision(), given_overrides())


def plan(entries, runs, store: Path, warn, keep: str = "read", note=None) -> tuple[list, list, dict]:
    """The entries' runs (each once; their smoke forms with ``smoke``), per entry its run
    names (or why it is not available), and the runs by name; ``runs``: the command's
    ``collapse_lab.plan.Plan`` (its preset, smoke, ``--set``). Each run keeps what the
    entries that read it read (``Entry.keeps``, their union for a shared run); ``keep``
    "all": every round's global and client models. ``note``: told of each stored run used in
    the other precision (``store.naming.in_stored_precision``)."""
    import dataclasses

    seen, per_entry, keeps = {}, {}, {}
    for e in entries:
        try:
            cs = runs.runs(e, warn, overrides={})
        except CollapseLabError as err:  # a model, method or data set the toolkit lacks (the baselines issue)
            per_entry[e.name] = f"not available at --preset {runs.preset}: {err}"
            continue
        if runs.overrides and cs:  # --set: one line when it changes nothing or cannot apply
            cs = overridden(e, runs, warn)
        if runs.precision is None:  # stored runs keep the precision they trained in
            cs = in_stored_precisions(store, cs, note)
        per_entry[e.name] = [c.run_name() for c in cs]
        g, loc = ("all", "all") if keep == "all" else e.keeps()
        for c in cs:
            seen.setdefault(c.run_name(), c)
            had = keeps.get(c.run_name(), ("last", "none"))
            keeps[c.run_name()] = (wider(had[0], g, GLOBAL_ORDER), wider(had[1], loc, LOCAL_ORDER))
    for name, c in seen.items():
        seen[name] = dataclasses.replace(c, keep_global=keeps[name][0], keep_local=keeps[name][1])
    return list(seen.values()), per_entry, seen


def overridden(e, runs, warn) -> list:
    """The entry's runs under the plan's ``--set``; each key must change some run of it
    (compared on the real runs: a smoke form cuts some settings, e.g. local training, to a
    few steps)."""
    def names(o):  # the run's name and its rounds (rounds is not part of the name: a longer run extends it)
        return [(c.run_name(), c.rounds) for c in runs.runs(e, warn, smoke=False, overrides=o)]

    before = names({})
    for k, v in runs.overrides.items():
        if names({k: v}) == before:
            raise CollapseLabError(f"--set {describe({k: v})}: changes none of {e.name}'s runs at --preset "
                                   f"{runs.preset} (they have it already); drop it")
    return runs.runs(e, warn)


def smoke_paths(smoke: bool, store: str, out: str, out_default: str) -> tuple[Path, Path]:
    """The store and output folder of a call: with ``--smoke`` the defaults become
    ``checkpoints-smoke`` and ``<out>-smoke`` (a smoke store never holds real runs: checked,
    and marked, by ``store.paths.check_smoke``); a smoke store without ``--smoke`` is refused."""
    from ..store.paths import check_smoke

    if smoke:
        store = "checkpoints-smoke" if store == "checkpoints" else store
        out = f"{out_default}-smoke" if out == out_default else out
    check_smoke(store, smoke)
    return Path(store), Path(out)


def train_missing(configs, store: Path, backend: str, workers: int | None, stack: int, address, say,
                  drop_checkpoints: bool = False, time_limit: str | None = None) -> list[dict]:
    """Train (or finish) the runs not complete in the store through the sweep engine;
    returns the failures. Diverged runs are left alone (their figure says so). Runs tagged
    ``timing`` (the timing tables) train last, one at a time on all the cores, unstacked:
    their ``train_seconds`` is what a round costs. ``time_limit``: runs stop by it
    (``timelimit``); theirs are ``time-limit`` outcomes (``stop_if_late``)."""
    timed = [c for c in configs if c.tag == "timing"]
    rest = [c for c in configs if c.tag != "timing"]
    failed = train_runs(rest, store, backend, workers, stack, address, say, drop_checkpoints, time_limit)
    if any(f["status"] == "time-limit" for f in failed):
        return failed + [{"run": c.run_name(), "status": "time-limit", "error": "not started before the time limit"}
                         for c in timed]
    return failed + train_runs(timed, store, backend, 1, 1, address, say, drop_checkpoints, time_limit)


def train_entries(configs, store: Path, backend: str, workers, stack: int, address, say, prefix: str = "",
                  drop_checkpoints: bool = False, time_limit: str | None = None) -> list[dict]:
    """``train_missing``, with Ctrl-C or SIGTERM said and turned into the exit status (130,
    143); the sweep is imported here, only when something trains."""
    from ..sweep.backends import Interrupted

    try:
        return train_missing(configs, store, backend, workers, stack, address, say, drop_checkpoints, time_limit)
    except Interrupted as e:
        from ..signals import exit_status

        say(f"{prefix}interrupted ({e.signame}): finished runs are kept; the same command continues")
        raise SystemExit(exit_status(e.signame)) from None


def lacking_data(names: list[str], failed: list[dict]) -> str | None:
    """Why an entry whose runs (``names``) could not train for missing data is not rendered
    (``missing_data`` named the folders), instead of "run ... is missing: figures trains it"."""
    missing = {f["run"]: f["error"] for f in failed if f.get("missing_data")}
    lacking = sorted({missing[n] for n in names if n in missing})
    return f"{'; '.join(lacking)} (the folder expected is named above; give --data-root)" if lacking else None


def missing_line(err: Exception) -> str:
    """Why an entry did not render; a run it lacks comes with the command that trains it: this
    one as given (its --set, --store, --data-root), less --no-train."""
    from ..errors import RunMissing
    from ..timelimit import without_no_train

    return f"{err}; `{without_no_train()}` trains it" if isinstance(err, RunMissing) else str(err)


def stop_if_late(failed: list[dict], say) -> None:
    """``--time-limit`` stopped training: nothing renders; exit 75 with the command that continues."""
    from ..timelimit import EXIT_TIME_LIMIT, continue_command

    late = [f for f in failed if f["status"] == "time-limit"]
    if late:
        say(f"time limit: {len(late)} run(s) stopped after their last round that fit or not started; every complete "
            f"round is kept and nothing is rendered; continue with: {continue_command()}")
        raise SystemExit(EXIT_TIME_LIMIT)


def missing_data(configs, say) -> tuple[list[dict], list]:
    """Every data set the runs need, read before anything trains: one line per missing data
    set naming the folder expected and where it looked; its runs are reported as failed and
    the others go on. Returns (the failures, the runs whose data are here)."""
    from ..data import dataset_of
    from ..data_root import default_data_root

    def key(c):
        return c.dataset, c.data_root, c.image_size, repr(sorted(c.dataset_options.items()))

    missing, here = {}, set()
    for c in configs:
        if key(c) in here or key(c) in missing:
            continue
        try:
            dataset_of(c)
            here.add(key(c))
        except CollapseLabError as e:
            missing[key(c)] = str(e)
    for (name, root, _, _), msg in missing.items():
        where = default_data_root()[1] if root is None else f"{root}"
        say(f"data set {name} is missing: {msg} (looked in: {where})")
    failed = [{"run": c.run_name(), "status": "failed", "error": f"data set {c.dataset} is missing",
               "missing_data": c.dataset} for c in configs if key(c) in missing]
    return failed, [c for c in configs if key(c) not in missing]


def train_runs(configs, store: Path, backend: str, workers: int | None, stack: int, address, say,
           drop_checkpoints: bool = False, time_limit: str | None = None) -> list[dict]:
    from ..sweep import backends, service

    refused, configs = missing_data(configs, say)
    busy = []
    if backend == "slurm":  # runs a SLURM job is training: watched, not refused for their lock
        from ..sweep.slurm import split_busy

        configs, busy = split_busy(store, configs)
    from .busy_runs import held_by, lost_the_lock, raced, trained_elsewhere, wait_for

    configs, elsewhere = trained_elsewhere(store, configs)
    if elsewhere:
        say(f"{len(elsewhere)} run(s) are being trained by another collapse-lab process "
            f"({held_by(store, elsewhere[0])}); this command waits for them, then reads them")
    p = service.plan(configs, store, each=True, say=say)
    refused += p.refused
    if not p.pending and not busy:
        return refused + wait_for(store, elsewhere, say)
    todo = [q.config for q in p.pending]
    slurm = None
    if backend == "slurm":  # --time-limit: each job's training time
        from ..sweep.slurm import check_cluster
        from .slurm_options import check_round, given_slurm

        slurm = given_slurm(None, time_limit)
        check_round(slurm, todo)
        check_cluster(slurm)
    else:
        check_time_limit(time_limit, todo)
    work, alone = service.work_units(p, stack)
    work, todo = work + [[c] for c in busy], todo + busy  # submit names their jobs; wait watches them
    if stack > 1 and alone:  # said, not silent: why fewer runs share a unit than --stack allows
        why = sorted({r for _, r in alone})
        say(f"{len(alone)} run(s) cannot stack and train alone: {'; '.join(why[:3])}" + (" ..." if len(why) > 3 else ""))
    n = workers or backends.cores()
    service.check(p, store, work, n, smoke_ok=True, drop_checkpoints=drop_checkpoints)  # figures/tables checked the smoke mark
    say(f"training {len(todo)} run(s) in {len(work)} unit(s) on {backend} "
        + {"local": f"({n} workers", "ray": "(Ray workers", "slurm": "(one SLURM job each"}[backend] + f", --stack {stack})")
    state = {"done": 0, "t0": time.time()}

    def report(ev: dict) -> None:
        if ev["event"] == "end":
            if drop_checkpoints and ev["status"] == "complete":  # tables --smoke: metrics are what a table reads
                from ..store import RunDir

                RunDir(store / Path(ev["run"]).name).drop_checkpoints("tables --smoke")
            state["done"] += 1
            status, why = ev["status"], f": {ev['error']}" if ev.get("error") and ev["status"] != "complete" else ""
            if raced(ev):  # not this command's failure: it waits for the other process below
                status, why = "taken by another collapse-lab process as this one started it", "; waited for"
            say(f"{state['done']}/{len(todo)} runs trained ({ev['run']}: {status}{why}, {time.time() - state['t0']:.0f} s)")

    results = service.execute(work, store, backend, n, report, time_limit, address, slurm=slurm, say=say)
    taken = lost_the_lock(results, todo)  # another command took a run between planning and training
    if taken:
        say(f"{len(taken)} run(s) were taken by another collapse-lab process as this one started them; waiting for them")
    lost = {c.run_name() for c in taken}
    return (refused + [r for r in results if r["status"] not in ("complete", "skipped") and r["run"] not in lost]
            + wait_for(store, elsewhere + taken, say))


def catalogue_options(out_default: str, out_help: str, list_help: str, json_help: str):
    """The options ``figures`` and ``tables`` share: what to render, where, and how the
    missing runs train."""
    opts = [
        click.argument("names", nargs=-1),
        click.option("--preset", type=click.Choice(["quick", "cpu", "paper"]), default="quick", show_default=True,
                     help="quick: stand-in data (digits, Gaussian), minutes on a CPU; cpu: real CIFAR-10 (1,000 or 300 "
                          "training images per class, chosen by content) with small models, under 30 minutes an entry on 2 cores, for the entries "
                          "that have it; paper: the papers' settings (a GPU and the data sets)."),
        click.option("--store", default="checkpoints", show_default=True, type=click.Path(file_okay=False),
                     help="Run store."),
        click.option("--out", default=out_default, show_default=True, type=click.Path(file_okay=False), help=out_help),
        click.option("--list", "list_", is_flag=True, help=list_help),
        click.option("--no-train", is_flag=True, help="Render from the runs present; an entry missing runs is reported."),
        click.option("--backend", type=click.Choice(["local", "ray", "slurm"]), default="local", show_default=True,
                     help="Where missing runs train: local processes, a Ray cluster, or one SLURM job each (the "
                          "command waits for them, then renders; docs/sweeps.md)."),
        click.option("--workers", type=int, default=None, help="local: training processes (default: the cores)."),
        click.option("--stack", type=int, default=8, show_default=True,
                     help="Runs trained together as one stacked model (see `sweep --stack`); 1: each on its own."),
        click.option("--address", default=None, help="ray: auto or HOST:PORT of a running cluster."),
        click.option("--json", "as_json", is_flag=True, help=json_help),
        click.option("--dry-run", "dry_run_", is_flag=True, help="Train and render nothing: per preset, the runs, their checkpoint "
                     "volume and the compute time per device class, estimated from the project's measurements."),
        click.option("--keep", type=click.Choice(["read", "all"]), default="read", show_default=True,
                     help="Checkpoints each run keeps: read = what the entries that read it read (most: the last round's "
                          "global model; the last round's clients where local models are read), all = every round's "
                          "global and client models (for your own analyses; many times the bytes, see --dry-run)."),
        click.option("--smoke", is_flag=True, help="Prove the path without a GPU: every run of the entries at --preset, "
                     "cut to one round of a few local steps on a data subset, in a store of its own "
                     "(default checkpoints-smoke); outputs marked smoke, claims not checked."),
        time_limit_option,
        data_root_option,
        precision_option,
        set_option,
    ]

    def deco(f):
        from .slurm_options import slurm_options

        f = slurm_options(f)
        for o in reversed(opts):
            f = o(f)
        return f

    return deco


def _given_presets(preset: str) -> tuple[str, ...]:
    """The presets a --dry-run plans: the one --preset named, or all three when none was given."""
    from click.core import ParameterSource

    ctx = click.get_current_context(silent=True)
    given = ctx is not None and ctx.get_parameter_source("preset") not in (None, ParameterSource.DEFAULT)
    return (preset,) if given else ("quick", "cpu", "paper")


def dry_run(entries, smoke: bool, as_json: bool, say, keep: str = "read",
            presets: tuple[str, ...] = ("quick", "cpu", "paper")) -> None:
    """``--dry-run``: the plan of each preset (``bench.estimate``; every preset unless one was
    named) and each entry's checkpoint bytes (a run shared by entries counts in each; the
    total counts it once), as text or JSON."""
    from ..bench.estimate import estimate, human_bytes, lines

    plans = {}
    for preset in presets:
        configs, per_entry, by_name = plan(entries, command_plan(preset, smoke), Path("."), lambda m: None, keep)
        plans[preset] = estimate(configs)
        plans[preset]["entries"] = {
            name: estimate([by_name[r] for r in runs])["total"]["bytes"] if isinstance(runs, list) else None
            for name, runs in per_entry.items()}
    if as_json:
        click.echo(json.dumps({"smoke": smoke, "keep": keep, "presets": plans}, indent=1))
        return
    for preset, p in plans.items():
        for line in lines(p, f"--preset {preset}" + (" --smoke" if smoke else "") + f" --keep {keep}"):
            click.echo(line)
        sized = sorted(((b, n) for n, b in p["entries"].items() if b is not None), reverse=True)
        click.echo("  checkpoints per entry (largest first): " + ", ".join(f"{n} {human_bytes(b)}" for b, n in sized))


def check_training(workers: int | None, stack: int, backend: str = "local", address=None, list_: bool = False,
                   no_train: bool = False, **with_list) -> None:
    """The training options of ``figures``/``tables``, checked as ``sweep`` checks them;
    options that ``--list`` or ``--no-train`` would ignore are refused, not dropped silently."""
    if workers is not None and workers < 1:
        raise CollapseLabError(f"--workers must be >= 1 (got {workers})")
    if stack < 1:
        raise CollapseLabError(f"--stack must be >= 1 (got {stack}); 1 trains every run on its own")
    if backend == "ray" and workers is not None:
        raise CollapseLabError("--workers has no effect with --backend ray (Ray places the tasks); drop it")
    if backend != "ray" and address:
        raise CollapseLabError(f"--address has no effect with --backend {backend}; drop it or add --backend ray")
    if backend == "slurm" and workers is not None:
        raise CollapseLabError("--workers has no effect with --backend slurm (one job per run); drop it")
    from .slurm_options import check_backend

    check_backend(backend)
    if list_:
        given = [name for name, v in (("--no-train", no_train), *with_list.items()) if v]
        if given:
            raise CollapseLabError(f"{given[0]} has no effect with --list (it only lists); drop it")
    if no_train and (workers is not None or address or backend != "local" or with_list.get("--time-limit")):
        raise CollapseLabError("--workers, --backend, --address and --time-limit have no effect with --no-train "
                               "(nothing trains); drop them")


def list_entries(entries, per_entry, store: Path, out: Path, by_name: dict, as_json: bool, suffix: str = "png") -> None:
    from ..store import RunDir, run_path

    rows = []
    for e in entries:
        names = per_entry[e.name]
        if isinstance(names, str):
            rows.append({"entry": e.name, "renderer": e.renderer, "runs": 0, "present": 0, "missing": 0,
                         "last_rendered": "-", "not_rendered": names})
            continue
        present = 0
        for n in names:
            if RunDir(run_path(store, by_name[n])).is_complete():
                present += 1
        png = out / f"{e.name}.{suffix}"
        last = time.strftime("%Y-%m-%d %H:%M", time.localtime(png.stat().st_mtime)) if png.is_file() else "-"
        rows.append({"entry": e.name, "renderer": e.renderer, "runs": len(names), "present": present,
                     "missing": len(names) - present, "last_rendered": last, "not_rendered": e.not_rendered})
    if as_json:
        click.echo(json.dumps(rows, indent=1))
        return
    click.echo(f"{'entry':<18} {'renderer':<14} {'runs':>5} {'present':>8} {'missing':>8}  last rendered")
    for r in rows:
        tail = f"not rendered: {r['not_rendered']}" if r["not_rendered"] else r["last_rendered"]
        click.echo(f"{r['entry']:<18} {r['renderer']:<14} {r['runs']:>5} {r['present']:>8} {r['missing']:>8}  {tail}")
