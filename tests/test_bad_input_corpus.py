"""The bad-input corpus (issue 29): mistakes across every command, each answered with
exit status 2 and one ``error:`` line that names the option or file, nothing written and
nothing removed (the whole scratch folder is hashed before and after).
``tests/test_bad_input.py`` holds the first 78 cases; these are the rest."""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from collapse_lab.cli import cli
from tests.fixtures import invoke_case, tiny_train_args

# the run of the store the cases read
STORED = tiny_train_args(per_class=20, test_per_class=5, epochs=1, rounds=2, clients=3, alpha="0.5")

T = ["train", "--rounds", "1"]
A = ("spectrum", "compare", "cka", "nc")  # the analysis commands share their selection options


def _train_numbers() -> list:
    cases = []
    for flag in ("--rounds", "--local-epochs", "--batch-size", "--clients", "--min-size", "--seed", "--probe",
                 "--parallel-clients"):
        base = ["train"] if flag == "--rounds" else T
        cases += [(base + [flag, "abc"], f"'{flag}'"), (base + [flag, "1.5"], f"'{flag}'"), (base + [flag, ""], f"'{flag}'")]
    for flag in ("--lr", "--momentum", "--weight-decay", "--sample-fraction"):
        cases += [(T + [flag, "abc"], f"'{flag}'"), (T + [flag, "nan"], flag)]
    for flag, v in (("--rounds", "2"), ("--lr", "0.1"), ("--dataset", "digits"), ("--method", "fedavg"),
                    ("--tag", "a"), ("--store", "x"), ("--preset", "quick"), ("--keep-local", "all")):
        cases.append((["train", flag, v, flag, v], f"{flag} given twice"))
    return cases


def _analysis() -> list:
    cases = []
    for cmd in A:
        cases += [
            ([cmd, "--store", "MISSING"], "no trained runs in"),
            ([cmd, "--store", "AFILE"], "is a file"),
            ([cmd, "--round", "abc"], "'--round'"),
            ([cmd, "--client", "x"], "'--client'"),
            ([cmd, "--tau", "0"], "--tau must be a finite number > 0"),
            ([cmd, "--tau", "inf"], "--tau must be a finite number > 0"),
            ([cmd, "--split", "val"], "--split 'val'"),
            ([cmd, "--feature-dtype", "int8"], "--feature-dtype 'int8'"),
            ([cmd, "--device", "tpu"], "--device 'tpu'"),
            ([cmd, "--round", "1", "--round", "2"], "--round given twice"),
            ([cmd, "--alpha", "abc"], "--alpha 'abc' is not a number"),
            ([cmd, "--out", ""], "--out is empty"),
            ([cmd, "--run", "AFILE"], "--run"),
            ([cmd, "--bogus"], "No such option"),
            ([cmd, "extra"], "unexpected extra argument"),
        ]
    cases += [(["spectrum", "--top", "0"], "--top must be >= 1"), (["spectrum", "--over-rounds", "a:b"], "--over-rounds 'a:b'"),
              (["spectrum", "--over-rounds", ""], "--over-rounds"), (["cka", "--over-rounds", "3:1"], "runs backwards"),
              (["nc", "--over-rounds", "0:x"], "--over-rounds '0:x'"), (["compare", "--top", "-2"], "--top must be >= 1"),
              (["spectrum", "--rounds", "all"], "--over-rounds")]  # the analyses' old name: pointed to the new
    return cases


R = ["report"]
REPORT = [(R + ["--store", "MISSING"], "no complete runs in"), (R + ["--store", "AFILE"], "is a file"),
          (R + ["--tau", "0"], "--tau"), (R + ["--tau", "nan"], "--tau"), (R + ["--html", ""], "--html is empty"),
          (R + ["--device", "tpu"], "--device 'tpu'"), (R + ["--tau", "1", "--tau", "2"], "--tau given twice"),
          (R + ["--html", "ADIR"], "--html"), (R + ["--figures", "AFILE"], "--figures"),
          (R + ["--out", "r.html"], "--out: report writes one file; give it as --html FILE")]
RUNS = [(["runs", "--store", "MISSING"], "no such folder"), (["runs", "--store", "AFILE"], "is a file"),
        (["runs", "--where", "method"], "write FIELD=VALUE"), (["runs", "--where", "nosuch=1"], "--where nosuch"),
        (["runs", "--store", "STORE", "--store", "STORE"], "given twice"), (["runs", "--store", ""], "is empty")]
B = ["bench"]
BENCH = [(B + ["--model", ","], "names no model"), (B + ["--model", " , "], "names no model"),
         (B + ["--test-images", "0"], "--test-images"), (B + ["--clients", "0"], "--clients"),
         (B + ["--rounds", "0"], "--rounds"), (B + ["--warmup", "-1"], "--warmup"),
         (B + ["--precision", "fp8"], "--precision"), (B + ["--compile", "turbo"], "--compile"),
         (B + ["--device", "tpu"], "--device 'tpu'"), (B + ["--local-epochs", "0"], "--local-epochs"),
         (B + ["--repeats", "1", "--repeats", "2"], "--repeats given twice"), (B + ["--images", "x"], "'--images'"),
         (B + ["--sweep", "--sweep-seeds", "0"], "must be >= 1"), (B + ["--parallel-clients", "-1"], "--parallel-clients")]
SW = ["sweep"]
SWEEP = [
    (SW + ["MISSING.yaml"], "no such file"), (SW + ["SPEC:binary"], "is a binary file"),
    (SW + ["SPEC:empty"], "is empty"), (SW + ["SPEC:braces"], "neither base options nor a grid"),
    (SW + ["SPEC:unknown"], "unknown key 'runs'"), (SW + ["SPEC:notlist"], "grid.alpha must be a non-empty list"),
    (SW + ["SPEC:emptyaxis"], "grid.alpha must be a non-empty list"),
    (SW + ["SPEC:rounds"], "differ only in rounds"), (SW + ["SPEC:device"], "cannot vary in a sweep"),
    (SW + ["SPEC:noseeds"], "seeds must be a non-empty list"), (SW + ["SPEC:seedstext"], "seeds must be a non-empty list"),
    (SW + ["SPEC:dupkey"], "appears twice"), (SW + ["SPEC:nan"], "is NaN"), (SW + ["SPEC:badlr"], "--lr 'abc' is not a number"),
    (SW + ["SPEC:badopt"], "unknown option(s) learning_rate"), (SW + ["SPEC:samerun"], "are the same run"),
    (SW + ["SPEC:huge", "--max-runs", "100"], "the grid has 1,000,000 points"),
    (SW + ["SPEC:ok", "--workers", "0"], "--workers must be >= 1"), (SW + ["SPEC:ok", "--stack", "0"], "--stack must be >= 1"),
    (SW + ["SPEC:ok", "--max-runs", "0"], "--max-runs must be >= 1"),
    (SW + ["SPEC:ok", "--backend", "ray", "--workers", "2"], "--workers has no effect with --backend ray"),
    (SW + ["SPEC:ok", "--address", "auto"], "have no effect with --backend local"),
    (SW + ["SPEC:ok", "--backend", "pbs"], "'--backend'"),
    (SW + ["SPEC:ok", "--backend", "slurm", "--slurm-mem", "lots"], "--slurm-mem 'lots'"),
    (SW + ["SPEC:ok", "--backend", "slurm", "--slurm-time", "30s"], "--slurm-time '30s': SLURM counts job time in minutes"),
    (SW + ["SPEC:ok", "--slurm-gpus", "1"], "--slurm-gpus has no effect with --backend local"),
    (SW + ["SPEC:ok", "--status", "--time-limit", "1h"], "--status only reports"), (SW + ["SPEC:ok", "--workers", "1", "--workers", "2"], "given twice"),
    (SW + ["SPEC:ok", "--store", ""], "--store is empty"), (SW + ["SPEC:overflow"], "too large for a number"),
    (SW + ["SPEC:list"], "must hold a mapping"), (SW + ["SPEC:txt"], "use a .toml, .yaml/.yml or .json file"),
    (SW + ["SPEC:badtag"], "--tag"), (SW + ["SPEC:jsondup"], "appears twice"),
]
FIGURES = []
for _cmd, _extra in (("figures", "--check"), ("tables", "--compare-paper")):
    FIGURES += [
        ([_cmd, "no-such-entry"], "unknown"), ([_cmd, "--stack", "0"], "--stack must be >= 1"),
        ([_cmd, "--workers", "0"], "--workers must be >= 1"),
        ([_cmd, "--backend", "ray", "--workers", "2"], "--workers has no effect with --backend ray"),
        ([_cmd, "--address", "auto"], "--address has no effect with --backend local"),
        ([_cmd, "--backend", "slurm", "--workers", "2"], "--workers has no effect with --backend slurm"),
        ([_cmd, "--slurm-partition", "gpu"], "--slurm-partition has no effect with --backend local"),
        ([_cmd, "--list", "--no-train"], "--no-train has no effect with --list"),
        ([_cmd, "--list", _extra], f"{_extra} has no effect with --list"),
        ([_cmd, "--no-train", "--workers", "2"], "no effect with --no-train"),
        ([_cmd, "--preset", "huge"], "'--preset'"), ([_cmd, "--out", ""], "--out is empty"),
        ([_cmd, "--stack", "2", "--stack", "3"], "--stack given twice"), ([_cmd, "--store", ""], "--store is empty"),
    ]
TH = ["theory"]
THEORY = [(TH + ["thm1", "--eta", "0"], "--eta"), (TH + ["thm1", "--eta", "inf"], "--eta"),
          (TH + ["thm1", "--width", "0"], "--width"), (TH + ["thm1", "--seed", "-2"], "--seed"),
          (TH + ["thm1", "--depth", "x"], "'--depth'"), (TH + ["thm1", "--eta", "1", "--eta", "2"], "--eta given twice"),
          (TH + ["align", "--clients", "-1"], "--clients"), (TH + ["align", "--depth", "1"], "--depth"),
          (TH + ["prop1", "--store", "MISSING"], "no such folder"), (TH + ["nosuch"], "No such command"),
          (TH + ["thm1", "--out", ""], "--out is empty")]
TOP = [(["nosuch"], "No such command"), (["--nope"], "No such option"), (["train", "--rounds"], "'--rounds'")]
TRAIN_MORE = [
    (T + ["--tag", "../x"], "--tag"), (T + ["--tag", "a/b"], "--tag"), (T + ["--tag", ".."], "--tag"),
    (T + ["--tag", ".hidden"], "must not start with"), (T + ["--tag", "-x"], "must not start with"),
    (T + ["--tag", "x" * 300], "characters long"), (T + ["--tag", "a b"], "' '"), (T + ["--tag", "tab\tx"], "--tag"),
    (T + ["--store", ""], "--store is empty"), (T + ["--store", "AFILE/sub"], "is a file, not a folder"),
    (T + ["--store", "AFILE"], "is a file"), (["train", "--rounds", "10000001"], "--rounds 10000001 is too large"),
    (T + ["--clients", "100000000"], "--clients 100000000 is too large"),
    (T + ["--seed", "99999999999999999999"], "--seed"), (T + ["--local-epochs", "1000000"], "too large"),
    (T + ["--alpha", "-inf"], "--alpha must be > 0"), (T + ["--alpha", "nan"], "--alpha must be > 0"),
    (T + ["--alpha", ""], "--alpha '' is not a number"), (T + ["--alpha", "1e-400"], "--alpha must be > 0"),
    (["train", "extra"], "unexpected extra argument"), (T + ["--nope"], "No such option"),
    (T + ["--config", "AFILE"], "--config"), (T + ["--reg", "feddecorr", "--beta", "1e999"], "--beta"),
    (T + ["--method-option", "mu=1"], "method fedavg has no option mu"),
    (T + ["--method", "fedprox", "--method-option", "mu=nan"], "mu"),
    (T + ["--method", "fedprox", "--method-option", "mu=-1"], "mu"),
    (T + ["--reg-option", "groups=4"], "regularizer none has no option groups"),
]
CONFIGS = {
    "binary": b"\x00\x01\x02rounds: 1", "empty": b"", "comments": b"# nothing here\n\n",
    "dupyaml": b"rounds: 1\nrounds: 2\n", "nanyaml": b"lr: .nan\n", "overflow": b"lr: 1e999\n",
    "listtop": b"- rounds\n", "unknown": b"learning_rate: 0.1\n", "lrtext": b"lr: abc\n", "roundsbool": b"rounds: true\n",
    "roundsfloat": b"rounds: 1.5\n", "roundsnan": b"rounds: .nan\n", "alphabool": b"alpha: true\n",
    "tag": b"tag: ../x\n", "seedneg": b"seed: -1\n", "syntax": b"rounds: [1, 2\n", "methodopts": b"method_options: 5\n",
    "dataset5": b"dataset: 5\n", "huge": b"clients: 100000000000000000000\n", "utf16": "rounds: 1\n".encode("utf-16"),
    "lrlist": b"lr: [0.1]\n", "dictkey": b"{[1]: 2}\n", "nullrounds": b"rounds: null\n",
    "alphanull": b"alpha: null\n", "alphasnull": b"alphas: null\n",
}
CONFIG_EXT = {"dupjson": ("json", b'{"rounds": 1, "rounds": 2}'), "nanjson": ("json", b'{"lr": NaN}'),
              "overjson": ("json", b'{"lr": 1e999}'), "duptoml": ("toml", b"rounds = 1\nrounds = 2\n"),
              "overtoml": ("toml", b"lr = 1e999\n"), "txt": ("txt", b"rounds: 1\n"), "jsonlist": ("json", b"[1, 2]")}
NAMED = {"alphanull": "alpha: null", "alphasnull": "alphas: null", "alphabool": "--alpha True is not a number", "tag": "--tag '../x'", "seedneg": "--seed must be >= 0",
         "huge": "--clients 100000000000000000000 is too large"}  # checked after the file is merged: the option is named
CONFIG_CASES = [(T + ["--config", f"CFG:{k}"], NAMED.get(k, "--config")) for k in (*CONFIGS, *CONFIG_EXT)]
SPECS = {
    "binary": ("yaml", b"\x00base"), "empty": ("yaml", b""), "braces": ("json", b"{}"), "unknown": ("yaml", b"runs: 1\n"),
    "notlist": ("yaml", b"grid: {alpha: 0.5}\n"), "emptyaxis": ("yaml", b"grid: {alpha: []}\n"),
    "rounds": ("yaml", b"base: {dataset: digits}\ngrid: {rounds: [2, 3]}\n"),
    "device": ("yaml", b"grid: {device: [cpu, auto]}\n"), "noseeds": ("yaml", b"base: {rounds: 1}\nseeds: []\n"),
    "seedstext": ("yaml", b"base: {rounds: 1}\nseeds: abc\n"), "dupkey": ("yaml", b"base: {rounds: 1}\nbase: {rounds: 2}\n"),
    "nan": ("yaml", b"base: {lr: .nan}\n"), "badlr": ("yaml", b"base: {lr: abc}\n"),
    "badopt": ("yaml", b"base: {learning_rate: 0.1}\n"), "samerun": ("yaml", b"grid: {lr: [0.01, 1.0e-2]}\n"),
    "huge": ("yaml", b"grid: {lr: [" + b", ".join(b"%d" % i for i in range(1, 1001)) + b"], seed: ["
             + b", ".join(b"%d" % i for i in range(1000)) + b"]}\n"),
    "ok": ("yaml", b"base: {rounds: 1, alpha: 0.5}\n"), "overflow": ("yaml", b"base: {lr: 1e999}\n"),
    "slurmtypo": ("yaml", b"base: {rounds: 1, alpha: 0.5}\nslurm: {partiton: gpu}\n"),
    "slurmtime": ("yaml", b"base: {rounds: 1, alpha: 0.5}\nslurm: {time: 0}\n"),
    "slurmcpus": ("yaml", b"base: {rounds: 1, alpha: 0.5}\nslurm: {cpus: 0}\n"),
    "list": ("yaml", b"- base\n"), "txt": ("txt", b"base: {rounds: 1}\n"), "badtag": ("yaml", b"base: {tag: ../up}\n"),
    "jsondup": ("json", b'{"base": {"lr": 0.1, "lr": 0.2}}'),
}
# issue 47: what was accepted, dropped silently or an internal error
G = ["--dataset", "gaussian"]
IMP = ["--dataset", "digits", "--global-files", "round_{round}/global.pt"]
ISSUE47 = [
    (T + ["--probe", "-5"], "--probe must be >= 0"),
    (T + ["--parallel-clients", "-1"], "--parallel-clients must be >= 0"),
    (T + ["--method", "fedprox", "--method-option", "mu=0.1", "--method-option", "mu=0.2"],
     "--method-option mu is given twice"),
    (T + G + ["--dataset-option", "dim=4", "--dataset-option", "dim=8"], "--dataset-option dim is given twice"),
    (T + ["--partition-option", "rng=default", "--partition-option", "rng=released"], "--partition-option rng is given twice"),
    (T + G + ["--dataset-option", "dim=1e999"], "not a finite number"),
    (T + G + ["--dataset-option", "dim=NaN"], "not a finite number"),
    (T + ["--keep-global", "every:\u00b2"], "--keep-global"), (T + ["--keep-global", "every:\u0663"], "--keep-global"),
    (T + ["--keep-local", "every:\u00b2"], "--keep-local"),
    (["export", "tensorboard", "--out", "AFILE"], "--out"),
    (["import", "IMP:ok", *IMP, "--set", "lr=nan"], "--set lr=nan: not a finite number"),
    (["import", "IMP:ok", *IMP, "--set", "lr=1e999"], "--set 'lr=1e999': 1e999 is not a finite number"),
    (["import", "IMP:ok", *IMP, "--set", "local_epochs=-1"], "--set local_epochs -1"),
    (["import", "IMP:ok", *IMP, "--set", "momentum=1.5"], "--set momentum 1.5"),
    (["import", "IMP:ok", *IMP, "--set", "lr=0.1", "--set", "lr=0.2"], "--set lr is given twice"),
    (["import", "IMP:ok", *IMP, "--normalize", "0.5,0.5,0.5/0.2,0.2,0.2"], "--normalize"),
    (["import", "IMP:ok", *IMP, "--tag", "a\u202eb"], "--tag"), (["import", "IMP:ok", *IMP, "--tag", "a\u00a0b"], "--tag"),
    (["import", "IMP:dup", *IMP], "two files for round 1"),
    (["import", "IMP:link", *IMP], "is a symbolic link"),
    (["import", "IMP:fifo", *IMP], "not a regular file"),
    (["import", "IMP:dir", *IMP], "is a folder"),
]
# issue 48: figures/tables --set (fig1 at quick: local_epochs 2, lr 0.05, alpha varied by its grid)
F1 = ["figures", "feddecorr-fig1"]
SET = [
    (F1 + ["--set", "bogus=1"], "--set bogus: no such train option"),
    (F1 + ["--set", "device=cpu"], "--set device: device is not part of what a run computes"),
    (F1 + ["--set", "tag=x"], "--set tag: tag is not part of what a run computes"),
    (F1 + ["--set", "local_epochs=abc"], "--set: --local-epochs 'abc' is not a whole number"),
    (F1 + ["--set", "local_epochs=1.5"], "--set: --local-epochs 1.5 is not a whole number"),
    (F1 + ["--set", "lr=nan"], "--set: --lr 'nan' is not a number"),
    (F1 + ["--set", "lr=NaN"], "--set 'lr=NaN': NaN is not a finite number"),
    (F1 + ["--set", "lr=0.1", "--set", "lr=0.2"], "--set lr is given twice"),
    (F1 + ["--set", "lr"], "--set 'lr': write KEY=VALUE"),
    (F1 + ["--set", "lr=-1"], "--lr must be > 0"),
    (F1 + ["--set", "alpha=0.1"], "--set alpha: feddecorr-fig1 varies alpha across its runs"),
    (F1 + ["--set", "reg=decov"], "--set reg: feddecorr-fig1 varies reg across its runs"),
    (F1 + ["--set", "local_epochs=2"], "--set local_epochs=2: changes none of feddecorr-fig1's runs"),
    (F1 + ["--set", "model=nosuch"], "nosuch"),
    (F1 + ["--set", "lr.x=1"], "--set lr.x: only the mappings"),
    (["tables", "feddecorr-table1", "--set", "bogus=1"], "--set bogus: no such train option"),
]
# issue 58's held-out cases
HELD_OUT = [
    (F1 + ["--set", "rounds=1e3"], "--set rounds=1e3: rounds is a whole number"),
    (F1 + ["--set", "local_epochs=2.0"], "--set local_epochs=2.0: local_epochs is a whole number"),
    (["layers", "--layer", ""], "--layer is empty"),
    (["layers", "--layer", " "], "--layer is empty"),
    (["ladder", "feddecorr-fig2", "--other-sample", "MISSING", "--dry-run"], "--other-sample"),
    (["ladder", "feddecorr-fig2", "--other-sample", "ADIR", "--no-train"], "holds no records/ folder"),
    (["ladder", "feddecorr-fig2", "--rungs", "nosuch"], "--rungs nosuch: no such file or packaged ladder"),
    (["train", "--model", "m" * 400], "--model: unknown model"),
    (["train", "--method", "x" * 300], "--method: unknown method"),
    (["units", "--run", "STORE"], "--run"),
    (SW + ["SPEC:slurmtypo", "--dry-run"], "slurm.partiton is not a SLURM option"),
    (SW + ["SPEC:slurmtime", "--dry-run"], "slurm.time '0'"),
    (SW + ["SPEC:slurmcpus", "--backend", "slurm", "--dry-run"], "slurm.cpus must be >= 1"),
    # a client the runs do not have: one line before any progress (nc and layers printed a progress line first)
    (["nc", "--client", "7"], "--client 7: "),
    (["compare", "--client", "7"], "--client 7: "),
    (["layers", "--store", "STORE", "--client", "7"], "--client 7: "),
    # nothing any rung could be written from: one line before the rungs are listed
    (["ladder", "feddecorr-fig2", "--no-train", "--store", "ADIR", "--out", "MISSING"], "--no-train: no rung has its runs"),
]
CASES = (_train_numbers() + _analysis() + REPORT + RUNS + BENCH + SWEEP + FIGURES + THEORY + TOP + TRAIN_MORE
         + CONFIG_CASES + ISSUE47 + SET + HELD_OUT)


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    res = CliRunner().invoke(cli, ["train", *STORED, "--probe", "0",
                                   "--store", str(root / "ck")])
    assert res.exit_code == 0, res.output
    (root / "afile").write_text("not a folder")
    (root / "adir").mkdir()
    for name, data in CONFIGS.items():
        (root / f"cfg-{name}.yaml").write_bytes(data)
    for name, (ext, data) in CONFIG_EXT.items():
        (root / f"cfg-{name}.{ext}").write_bytes(data)
    for name, (ext, data) in SPECS.items():
        (root / f"spec-{name}.{ext}").write_bytes(data)
    _import_sources(root)
    return root


def _import_sources(root: Path) -> None:
    """Checkpoint folders of other code: a good one, and one of each thing import once dropped."""
    import os

    import torch

    state = {"w": torch.zeros(2)}
    for name in ("ok", "dup", "link", "fifo", "dir"):
        (root / f"imp-{name}" / "round_1").mkdir(parents=True)
        if name != "link":
            torch.save(state, root / f"imp-{name}" / "round_1" / "global.pt")
    (root / "imp-dup" / "round_01").mkdir()
    torch.save(state, root / "imp-dup" / "round_01" / "global.pt")  # round 1 again
    (root / "imp-link" / "round_2").mkdir()
    torch.save(state, root / "imp-link" / "round_2" / "global.pt")
    os.symlink("global.pt", root / "imp-link" / "round_1" / "global.pt")  # links to itself
    (root / "imp-fifo" / "round_2").mkdir()
    os.mkfifo(root / "imp-fifo" / "round_2" / "global.pt")
    (root / "imp-dir" / "round_2" / "global.pt").mkdir(parents=True)  # a folder of the file's name


def digest(folder: Path) -> dict:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(folder.rglob("*"))}


def substitute(a: str, root: Path) -> str:
    if a.startswith("CFG:"):
        name = a[4:]
        ext = CONFIG_EXT[name][0] if name in CONFIG_EXT else "yaml"
        return str(root / f"cfg-{name}.{ext}")
    if a.startswith("IMP:"):
        return str(root / f"imp-{a[4:]}")
    if a.startswith("SPEC:"):
        return str(root / f"spec-{a[5:]}.{SPECS[a[5:]][0]}")
    return {"MISSING": str(root / "missing"), "MISSING.yaml": str(root / "missing.yaml"), "AFILE": str(root / "afile"),
            "AFILE/sub": str(root / "afile" / "sub"), "ADIR": str(root / "adir"), "STORE": str(root / "ck")}.get(a, a)


def invoke(args: list[str], root: Path):
    cmd = lambda *names: lambda a: a[0] in names  # noqa: E731
    return invoke_case(args, lambda a: substitute(a, root), [
        (cmd("train", "import"), "--store", root / "new"),
        (cmd(*A, "report", "runs", "sweep", "figures", "tables"), "--store", root / "ck"),
        (cmd(*A, "figures", "tables"), "--out", root / "fig"),
        (cmd("report"), "--html", root / "report.html")])


@pytest.mark.parametrize("args,msg", CASES, ids=[" ".join(a)[:80] for a, _ in CASES])
def test_bad_input_is_one_line_exit_2_and_changes_nothing(root, args, msg):
    before = digest(root)
    res = invoke(args, root)
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and msg in lines[0], res.stderr
    assert digest(root) == before


def test_the_corpus_has_at_least_200_cases_beyond_the_first_78():
    assert len(CASES) >= 200
