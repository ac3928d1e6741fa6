"""A ladder's rungs file (``collapse-lab ladder --rungs FILE``, issue 48).

YAML, a mapping with one key ``rungs``, a list; each rung is a mapping::

    rungs:
    - name: cpu                       # the preset as it is (no overrides)
    - name: e5
      set: {local_epochs: 5}          # figures' --set KEY=VALUE, as a mapping
      note: clients train 5 local epochs
    - name: bn
      set: {local_epochs: 5, model: cnn-bn}
      entries: [feddecorr-fig2]       # only where it applies (default: every entry named; a rung
                                      # whose entries are not on the command line is skipped)
    - name: bn-s6
      set: {model: cnn-bn}
      seeds: [0, 1, 2, 3, 4, 5]       # the entries' seed list replaced (the same runs, more seeds)

Each ``set`` is read as ``--set`` reads its items (``catalogue.overrides.parse``: the same
keys, values checked as ``train`` checks them). Whatever is wrong with the file is one line
that names the file, the rung and what to do (exit status 2).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import CollapseLabError

KEYS = {"name", "set", "note", "entries", "seeds"}
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass(frozen=True)
class Rung:
    name: str
    overrides: dict = field(default_factory=dict)  # as catalogue.overrides.parse returns them
    items: tuple[str, ...] = ()  # KEY=VALUE, as a user would give them to figures --set
    note: str = ""
    entries: tuple[str, ...] | None = None  # None: every entry of the ladder
    seeds: tuple[int, ...] | None = None  # None: each entry's own seed list


def _item(key, value) -> str:
    if isinstance(value, (dict, list)):
        raise CollapseLabError(f"{key}: give one value (a mapping's option as KEY.NAME: value)")
    text = value if isinstance(value, str) else json.dumps(value)
    return f"{key}={text}"


def _rung(i: int, d, where: str, entry_names: list[str]) -> Rung:
    if not isinstance(d, dict):
        raise CollapseLabError(f"{where}: rung {i + 1} must be a mapping with a name (and set, note, entries)")
    name = d.get("name")
    if not isinstance(name, str) or not NAME.match(name):
        raise CollapseLabError(f"{where}: rung {i + 1}: name must be a short word of letters, digits, '.', '_' or '-' "
                               f"(got {name!r})")
    unknown = sorted(set(d) - KEYS)
    if unknown:
        raise CollapseLabError(f"{where}: rung {name}: unknown key {unknown[0]!r}; a rung has {', '.join(sorted(KEYS))}")
    settings = d.get("set") or {}
    if not isinstance(settings, dict):
        raise CollapseLabError(f"{where}: rung {name}: set must be a mapping of train options (local_epochs: 5)")
    from .overrides import parse

    try:
        items = tuple(_item(k, v) for k, v in settings.items())
        overrides = parse(items)
    except CollapseLabError as e:
        raise CollapseLabError(f"{where}: rung {name}: {e}") from None
    entries = d.get("entries")
    if entries is not None:
        if not isinstance(entries, list) or not entries or not all(isinstance(x, str) for x in entries):
            raise CollapseLabError(f"{where}: rung {name}: entries must be a list of the catalogue's figure names")
        from ..analysis.catalogue import catalogue

        known = {e.name for e in catalogue("figure")}
        bad = [x for x in entries if x not in known]
        if bad:
            raise CollapseLabError(f"{where}: rung {name}: entry {bad[0]!r} is not a figure of the catalogue "
                                   "(`collapse-lab figures --list`); correct it or drop it here")
        # a rung for entries this ladder does not climb applies to none of them (a ladder of a subset)
        entries = tuple(x for x in entries if x in entry_names)
    rounds = overrides.get("rounds")
    if rounds is not None and (not isinstance(rounds, int) or rounds < 2):
        raise CollapseLabError(f"{where}: rung {name}: rounds {rounds!r}: give 2 or more (the regime's plateau rule "
                               "reads the accuracy over rounds)")
    seeds = d.get("seeds")
    if seeds is not None:
        if (not isinstance(seeds, list) or not seeds or len(set(seeds)) != len(seeds)
                or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in seeds)):
            raise CollapseLabError(f"{where}: rung {name}: seeds must be a list of distinct seeds (0, 1, 2, ...)")
        overrides = {**overrides, "seeds": list(seeds)}
        seeds = tuple(seeds)
    note = d.get("note") or ""
    if not isinstance(note, str):
        raise CollapseLabError(f"{where}: rung {name}: note must be a text")
    return Rung(name, overrides, items, note, entries, seeds)


def packaged() -> dict[str, Path]:
    """The ladders that ship with the package (``analyses/ladder/``): name -> file."""
    from ..analysis.catalogue import LADDERS

    return {p.stem: p for p in sorted(LADDERS.glob("*.yaml"))}


def rungs_path(path: str | Path) -> Path:
    """``--rungs``: a YAML file, or the name of a packaged ladder (``rungs``, the study's of
    docs/scale.md; ``rungs-gpu``): a file of that name wins."""
    p = Path(path)
    if p.is_file():
        return p
    ladders = packaged()
    if str(path) in ladders:
        return ladders[str(path)]
    raise CollapseLabError(f"--rungs {path}: no such file or packaged ladder; give a YAML file with a list of rungs, or "
                           f"one of {', '.join(ladders)} (docs/scale.md)")


def load_rungs(path: str | Path, entry_names: list[str]) -> list[Rung]:
    """The rungs of FILE (or of a packaged ladder), checked (module docstring)."""
    import yaml

    where = f"--rungs {path}"
    p = rungs_path(path)

    class Strict(yaml.SafeLoader):  # a key given twice is a mistake, not the later value silently
        pass

    def mapping(loader, node, deep=False):
        keys = [loader.construct_object(k, deep=deep) for k, _ in node.value]
        twice = sorted({str(k) for k in keys if keys.count(k) > 1})
        if twice:
            raise CollapseLabError(f"{where}: key {twice[0]!r} is given twice in one mapping (line "
                                   f"{node.start_mark.line + 1}); keep one")
        return loader.construct_mapping(node, deep=deep)
    Strict.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    try:
        d = yaml.load(p.read_text(), Loader=Strict)  # noqa: S506 -- a SafeLoader subclass
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise CollapseLabError(f"{where}: not valid YAML ({str(e).splitlines()[0]})") from None
    if not isinstance(d, dict) or set(d) != {"rungs"} or not isinstance(d["rungs"], list) or not d["rungs"]:
        raise CollapseLabError(f"{where}: the file is a mapping with one key, rungs: a non-empty list of rungs "
                               "(name, set, note, entries)")
    rungs = [_rung(i, r, where, entry_names) for i, r in enumerate(d["rungs"])]
    rungs = [r for r in rungs if r.entries is None or r.entries]  # rungs of entries not on this ladder: skipped
    seen: dict[str, int] = {}
    for r in rungs:
        if r.name in seen:
            raise CollapseLabError(f"{where}: rung name {r.name!r} is given twice; give each rung its own name")
        seen[r.name] = 1
    same = {}
    for r in rungs:  # two rungs that set the same things would train and report the same runs twice
        key = (json.dumps(r.overrides, sort_keys=True), r.entries)
        if key in same:
            raise CollapseLabError(f"{where}: rungs {same[key]} and {r.name} set the same options; drop one")
        same[key] = r.name
    return rungs
