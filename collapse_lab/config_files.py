"""Option files (``--config``, sweep specs) read strictly, in one place.

Writers may be lax, readers of a user's file are not: a duplicate key (YAML and JSON keep
the last one silently), a binary or empty file, NaN or a number too large for a float are
refused with one line naming the file. YAML numbers are read as people write them: PyYAML
follows YAML 1.1, where ``1e-3`` is the *string* "1e-3" (only ``1.0e-3`` is a float); here
both are floats, as in YAML 1.2, TOML and JSON.
"""
from __future__ import annotations

import functools
import json
import math
import re
from pathlib import Path

from .errors import CollapseLabError

_YAML_FLOAT = re.compile(r"^[-+]?(?:[0-9][0-9_]*)?(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)$|^[-+]?[0-9][0-9_]*\.[0-9_]*$"
                         r"|^[-+]?\.[0-9_]+$")
MAX_BYTES = 10_000_000


@functools.lru_cache(maxsize=1)
def _yaml_loader():
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class Strict(base):  # type: ignore[misc, valid-type]
        pass

    def mapping(loader, node, deep=False):
        loader.flatten_mapping(node)
        seen = {}
        for key_node, _ in node.value:
            key = loader.construct_object(key_node, deep=deep)
            try:
                hash(key)
            except TypeError:
                raise yaml.constructor.ConstructorError(None, None, f"a key that is not a name ({key!r})",
                                                        key_node.start_mark) from None
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"the key {key!r} appears twice (line {seen[key] + 1} and line "
                                f"{key_node.start_mark.line + 1}); keep one", key_node.start_mark)
            seen[key] = key_node.start_mark.line
        return base.construct_mapping(loader, node, deep=deep)

    def yaml_float(loader, node):
        text = loader.construct_scalar(node)
        v = base.construct_yaml_float(loader, node)
        if math.isinf(v) and ".inf" not in text.lower():
            raise yaml.constructor.ConstructorError(None, None, f"{text} is too large for a number (it overflows to "
                                                    "infinity)", node.start_mark)
        return v

    Strict.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    Strict.add_constructor("tag:yaml.org,2002:float", yaml_float)
    # 1e-3, 5E4: floats (YAML 1.1 reads them as strings)
    Strict.add_implicit_resolver("tag:yaml.org,2002:float", _YAML_FLOAT, list("-+0123456789."))
    return Strict


def _json_pairs(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"the key {k!r} appears twice; keep one")
        out[k] = v
    return out


def _finite_float(text: str) -> float:
    v = float(text)
    if math.isinf(v):
        raise ValueError(f"{text} is too large for a number (it overflows to infinity)")
    return v


def _finite_float_toml(text: str) -> float:
    if text.lstrip("+-") in ("inf", "nan"):  # spelled out: inf is alpha's IID, nan is refused below
        return float(text)
    return _finite_float(text.replace("_", ""))


def _json_constant(name):
    raise ValueError(f"{name} is not a number JSON allows; write a finite number (or \"inf\" for alpha)")


def _check_values(obj, where: str, path: str = "") -> None:
    """No NaN anywhere, no key that is not text; infinity only where it is spelled out
    (alpha: inf) -- a number that overflowed is refused."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if not isinstance(k, str):
                raise CollapseLabError(f"{where}: the key {k!r} is not a name; option names are text")
            _check_values(v, where, f"{path}.{k}" if path else k)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            _check_values(v, where, f"{path}[{i}]")
    elif isinstance(obj, float) and math.isnan(obj):
        raise CollapseLabError(f"{where}: {path} is NaN; give a number")


def load_mapping(path: str | Path, what: str) -> dict:
    """A YAML/TOML/JSON file holding a mapping; ``what`` names it in messages
    (``--config FILE``, ``sweep spec FILE``)."""
    p = Path(path)
    where = f"{what} {p}"
    try:
        if not p.is_file():
            raise CollapseLabError(f"{where}: no such file")
        data = p.read_bytes()[: MAX_BYTES + 1]
    except OSError as e:
        raise CollapseLabError(f"{where} cannot be read ({e.strerror or type(e).__name__})") from None
    if len(data) > MAX_BYTES:
        raise CollapseLabError(f"{where} is larger than {MAX_BYTES // 1_000_000} MB; an option file is a few lines")
    if b"\0" in data:
        raise CollapseLabError(f"{where} is a binary file, not YAML, TOML or JSON text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise CollapseLabError(f"{where} is not UTF-8 text") from None
    suffix = p.suffix.lower()
    if suffix not in (".toml", ".yaml", ".yml", ".json"):
        raise CollapseLabError(f"{where}: use a .toml, .yaml/.yml or .json file")
    if not text.strip() or all(not ln.strip() or ln.lstrip().startswith("#") for ln in text.splitlines()):
        raise CollapseLabError(f"{where} is empty; write options in it (see docs/training.md) or leave it out")
    try:
        if suffix == ".toml":
            import tomllib

            obj = tomllib.loads(text, parse_float=_finite_float_toml)
        elif suffix == ".json":
            obj = json.loads(text, object_pairs_hook=_json_pairs, parse_constant=_json_constant, parse_float=_finite_float)
        else:
            import yaml

            obj = yaml.load(text, Loader=_yaml_loader())  # noqa: S506 -- a SafeLoader subclass
    except RecursionError:
        raise CollapseLabError(f"{where} nests too deeply") from None
    except Exception as e:  # noqa: BLE001 -- each parser has its own error types
        first = " ".join(str(e).split())[:200]
        raise CollapseLabError(f"{where} does not parse: {first}") from None
    if not isinstance(obj, dict):
        raise CollapseLabError(f"{where} must hold a mapping of option names to values")
    _check_values(obj, where)
    return obj
