"""Bad input across every command: exit status 2, one line on stderr that names the
option, no traceback, nothing written. ``python -m tests.test_bad_input`` prints the table."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from collapse_lab.cli import cli
from tests.fixtures import invoke_case, tiny_train_args

# the run of the store the cases read
STORED = tiny_train_args(per_class=20, test_per_class=5, epochs=1, rounds=2, clients=3, alpha="0.5")

T = ["train", "--rounds", "1"]
S = ["spectrum"]
CASES = [
    (T + ["--lr", "inf"], "--lr inf is not finite"),
    (T + ["--lr", "0"], "--lr must be > 0"),
    (T + ["--reg", "feddecorr", "--beta", "nan"], "--beta nan is not finite"),
    (T + ["--reg", "feddecorr", "--beta", "inf"], "--beta inf is not finite"),
    (T + ["--reg", "feddecorr", "--beta", "-1"], "--beta must be >= 0"),
    (T + ["--beta", "0.5"], "--beta has no effect without a regularizer"),
    (T + ["--momentum", "nan"], "--momentum nan is not finite"),
    (T + ["--momentum", "1.5"], "--momentum must be in [0, 1)"),
    (T + ["--weight-decay", "inf"], "--weight-decay inf is not finite"),
    (T + ["--seed", "-1"], "--seed must be >= 0"),
    (T + ["--partition", "pathological", "--alpha", "0.1"], "--alpha has no effect with --partition pathological"),
    (T + ["--classes-per-client", "2"], "--classes-per-client has no effect with --partition dirichlet"),
    (T + ["--partition", "pathological", "--min-size", "3"], "--min-size has no effect with --partition pathological"),
    (T + ["--dataset-option", "foo=1"], "--dataset-option foo: data set digits has no such option"),
    (T + ["--dataset-option", "foo"], "--dataset-option 'foo': write KEY=VALUE"),
    (T + ["--image-size", "0"], "--image-size has no effect on --dataset digits"),
    (T + ["--data-root", "somewhere"], "--data-root has no effect on --dataset digits"),
    (T + ["--download"], "--download has no effect on --dataset digits"),
    (T + ["--alpha", "1e999"], "--alpha 1e999 overflows to infinity"),
    (T + ["--alpha", "0"], "--alpha must be > 0"),
    (T + ["--alpha", "abc"], "--alpha 'abc' is not a number"),
    (T + ["--decorr-norm", "official"], "--decorr-norm has no effect with --reg none (it is feddecorr's option normalization)"),
    (T + ["--reg", "feddecorr", "--decorr-norm", "nope"], "regularizer feddecorr option normalization='nope': use paper or official"),
    (T + ["--model", "vgg"], "--model: unknown model 'vgg'; choose one of: alexnet-bn, cnn, cnn-bn, linear"),
    (T + ["--method", "fedsgd"], "--method: unknown method 'fedsgd'; choose one of: fedadagrad, fedadam, fedavg"),
    (T + ["--reg", "l2"], "--reg: unknown regularizer 'l2'; choose one of: decov"),
    (T + ["--partition", "shards"], "--partition: unknown partition 'shards'; choose one of: dirichlet"),
    (T + ["--dataset", "imagenet"], "--dataset: unknown data set 'imagenet'; choose one of: cifar10"),
    (T + ["--augment", "crop+mixup"], "unknown step 'mixup'"),
    (T + ["--clients", "0"], "--clients 0 means one client per domain"),
    (T + ["--clients", "100000", "--min-size", "0"], "more than the 1437 training samples"),
    (T + ["--sample-fraction", "2"], "--sample-fraction must be in (0, 1]"),
    (["train", "--rounds", "0"], "--rounds must be >= 1"),
    (T + ["--batch-size", "0"], "--batch-size must be >= 1"),
    (T + ["--method", "fedprox", "--method-option", "mu=x"], "method option mu='x' is not a number"),
    (T + ["--method", "fedprox", "--method-option", "nu=1"], "method fedprox has no option nu; its options: mu"),
    (T + ["--server-momentum", "0.5"], "method fedavg has no option server_momentum"),
    (T + ["--method", "fedavgm", "--server-momentum", "1.5"], "--server-momentum must be in [0, 1)"),
    (T + ["--method", "fedetf", "--gmv-warmup", "0"], "--gmv-warmup must be >= 1"),
    (T + ["--reg", "structured-decov", "--reg-option", "groups=1"], "structured-decov groups must be a whole number >= 2"),
    (T + ["--keep-local", "sometimes"], "--keep-local"),
    (T + ["--device", "tpu"], "--device 'tpu' is not a device"),
    (T + ["--precision", "fp16"], "Invalid value for '--precision': 'fp16' is not one of 'auto', 'fp32', 'bf16'"),
    (T + ["--compile", "fast"], "--compile 'fast'"),
    (T + ["--cuda-graphs", "on", "--device", "cpu"], "--cuda-graphs on needs a CUDA device"),
    (T + ["--parallel-clients", "-1"], "--parallel-clients must be >= 0"),
    (T + ["--resume", "--overwrite"], "--resume and --overwrite contradict each other"),
    (T + ["--dataset", "mnist"], "mnist"),
    (T + ["--config", "missing.yaml"], "--config missing.yaml: no such file"),
    (S + ["--store", "EMPTY"], "no trained runs in"),
    (S + ["--alpha", "0.7"], "matches --alpha (after the filters before it)"),
    (S + ["--dataset", "mnist"], "matches --dataset"),
    (S + ["--round", "99"], "--round 99: "),
    (S + ["--round", "0"], "round 0 is the untrained initial model"),
    (S + ["--over-rounds", "5:2"], "--over-rounds '5:2': the range runs backwards"),
    (["layers", "--spectra-at", "7"], "--spectra-at '7': rounds must lie in 0.."),
    (S + ["--over-rounds", "1,2", "--round", "2"], "--round has no effect with --over-rounds"),
    (S + ["--tau", "nan"], "--tau must be a finite number > 0"),
    (S + ["--client", "-1"], "--client must be >= 0"),
    (S + ["--client", "9"], "--client 9: "),
    (S + ["--run", "NOTARUN"], "not a run folder (no run.json)"),
    (S + ["--run", "RUN", "--alpha", "inf"], "--alpha would be ignored with --run"),
    (S + ["--split", "val"], "--split 'val': use test or train"),
    (S + ["--feature-dtype", "float16"], "--feature-dtype 'float16': use float64 or float32"),
    (["compare", "--top", "0"], "--top must be >= 1"),
    (["theory", "thm1", "--eta", "nan"], "--eta must be a finite number > 0"),
    (["figures", "--stack", "0"], "--stack must be >= 1 (got 0)"),
    (["figures", "no-such-figure"], "unknown figure 'no-such-figure'; choose from: feddecorr-fig1"),
    (["tables", "--workers", "0"], "--workers must be >= 1 (got 0)"),
    (T + ["--time-limit", "3x"], "--time-limit '3x': write a duration such as 3h50m, 90m, 45s or 3600"),
    (T + ["--time-limit", "-1h"], "--time-limit '-1h': write a duration"),
    (["figures", "--no-train", "--time-limit", "1h"], "--time-limit have no effect with --no-train"),
    (["tables", "--dry-run", "--time-limit", "1h"], "--time-limit has no effect with --dry-run"),
    (["figures", "--list", "--time-limit", "1h"], "--time-limit has no effect with --list"),
    (["figures", "--preset", "fast"], "Invalid value for '--preset': 'fast' is not one of 'quick', 'cpu', 'paper'"),
    (T + ["--preset", "fast"], "--preset 'fast': unknown preset; choose one of: paper, cpu, quick"),
    (T + ["--dataset-option", "max_train_per_class=0"], "--dataset-option max_train_per_class=0: give a whole number"),
    (["tables", "feddecorr-fig2"], "unknown table 'feddecorr-fig2'"),
    (["theory", "thm1", "--depth", "1"], "--depth must be >= 2"),
    (["theory", "thm1", "--scale", "1e300"], "--scale 1e+300: give a scale in (0, 10]"),
    (["theory", "thm1", "--dataset", "mnist"], "--dataset mnist needs --data-root"),
    (["theory", "align", "--clients", "0"], "--clients must be >= 1"),
    (["theory", "align", "--client", "5", "--clients", "3"], "--client 5 is not one of the --clients 3 (0..2)"),
    (["theory", "prop1", "--seed", "-1"], "--seed must be >= 0"),
    (["bench", "--workload", "huge"], "--workload 'huge': choose one of cpu, paper-cifar10"),
    (["bench", "--repeats", "0"], "--repeats must be >= 1"),
    (["bench", "--images", "0"], "--images must be >= 1"),
    (["bench", "--loader-workers", "-1"], "--loader-workers must be >= 0"),
    (["bench", "--model", "vit"], "unknown model 'vit'"),
]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("bad")
    res = CliRunner().invoke(cli, ["train", *STORED,
                                   "--store", str(root / "ck")])
    assert res.exit_code == 0, res.output
    return root


def invoke(args: list[str], root: Path):
    run = next(p for p in (root / "ck").iterdir() if (p / "run.json").is_file())
    subs = {"EMPTY": str(root / "empty"), "NOTARUN": str(root), "RUN": str(run)}
    is_ = lambda *words: lambda a: a[:len(words)] == list(words)  # noqa: E731
    return invoke_case(args, lambda a: subs.get(a, a), [
        (is_("train"), "--store", root / "new"),
        (lambda a: a[0] in ("spectrum", "compare", "layers"), "--out", root / "fig"),
        (lambda a: a[0] in ("spectrum", "compare", "layers"), "--store", root / "ck"),
        (is_("theory", "prop1"), "--store", root / "ck"),
        (lambda a: a[0] == "theory" and a[1:2] != ["prop1"], "--out", root / "fig")])


@pytest.mark.parametrize("args,msg", CASES, ids=[" ".join(a) for a, _ in CASES])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(store, args, msg):
    res = invoke(args, store)
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and msg in lines[0], res.stderr
    assert not (store / "new").exists() and not (store / "fig").exists()


def main() -> None:  # the table for notes: command, exit status, message
    import tempfile

    with tempfile.TemporaryDirectory() as t:
        root = Path(t)
        CliRunner().invoke(cli, ["train", *STORED,
                                 "--store", str(root / "ck")])
        print("| command | exit | message |\n|---|---|---|")
        for args, _ in CASES:
            res = invoke(args, root)
            msg = res.stderr.strip().replace(str(root), "<tmp>").replace("|", "\\\\|")
            print(f"| `collapse-lab {' '.join(args)}` | {res.exit_code} | {msg} |")


if __name__ == "__main__":
    sys.exit(main())
