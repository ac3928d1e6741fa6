"""``bench``'s option checks, callable from Python: each refusal is one line naming the option."""
from __future__ import annotations

from ..errors import CollapseLabError


def models_of(model: str) -> list[str]:
    """The models of a comma-separated ``--model``; none is refused."""
    models = [m.strip() for m in model.split(",") if m.strip()]
    if not models:
        raise CollapseLabError(f"--model {model!r} names no model; give one or more, comma-separated (e.g. cnn)")
    return models


def check_counts(images=None, test_images=None, clients=None, local_epochs=None, reference_epochs=None, rounds=None,
                 repeats: int = 3, warmup=None, workers=None) -> None:
    for name, v in (("--images", images), ("--test-images", test_images), ("--clients", clients),
                    ("--local-epochs", local_epochs), ("--reference-epochs", reference_epochs), ("--rounds", rounds)):
        if v is not None and v < 1:
            raise CollapseLabError(f"{name} must be >= 1 (got {v})")
    if repeats < 1:
        raise CollapseLabError(f"--repeats must be >= 1 (got {repeats}; 3 or more tell a change from noise)")
    if warmup is not None and warmup < 0:
        raise CollapseLabError(f"--warmup must be >= 0 (got {warmup})")
    if workers is not None and workers < 0:
        raise CollapseLabError(f"--loader-workers must be >= 0 (got {workers})")


def check_sweep_counts(seeds: int, workers=None, rounds=None, stack=None) -> None:
    if seeds < 1 or any(v is not None and v < 1 for v in (workers, rounds, stack)):
        raise CollapseLabError("--sweep-seeds, --sweep-workers, --sweep-rounds and --sweep-stack must be >= 1")
