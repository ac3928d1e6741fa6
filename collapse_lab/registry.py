"""Name -> plugin registries, keyed by the names the CLI uses.

One pattern for every kind of plugin (data sets, models, partitions, methods,
regularizers, augmentation steps, and what comes next): a plugin is one file in its
package that decorates a function or class with ``@REGISTRY.register("name", **info)``.
The package's modules are imported the first time the registry is asked for a name, so
a new file is found without editing any ``__init__``. ``info`` holds what the rest of
the code needs to know about the plugin (a data set's default model and rounds, a
regularizer's default beta, ...); ``check`` lets a registry refuse a plugin that breaks
its kind's contract when it registers.
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil
from typing import Callable, Generic, Iterator, TypeVar

from .errors import CollapseLabError

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(self, kind: str, package: str | None = None, flag: str | None = None,
                 check: Callable[[str, T, dict], None] | None = None):
        """``package``: the dotted package whose modules are imported to find plugins;
        ``flag``: the CLI option that names one (for messages); ``check(name, obj, info)``
        raises TypeError when a plugin does not fulfil the kind's contract."""
        self.kind, self.package, self.flag, self._check = kind, package, flag, check
        self._items: dict[str, T] = {}
        self._info: dict[str, dict] = {}
        self._discovered = package is None

    def register(self, name: str, **info) -> Callable[[T], T]:
        def deco(obj: T) -> T:
            if name in self._items:
                raise ValueError(f"{self.kind} {name!r} registered twice")
            if self._check is not None:
                self._check(name, obj, info)
            self._items[name] = obj
            self._info[name] = info
            return obj

        return deco

    def discover(self) -> None:
        """Import every module of the package (each registers its plugins)."""
        if self._discovered:
            return
        self._discovered = True
        pkg = importlib.import_module(self.package)
        for m in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
            if not m.name.startswith("_"):
                importlib.import_module(f"{self.package}.{m.name}")

    def get(self, name: str) -> T:
        self.discover()
        try:
            return self._items[name]
        except KeyError:
            what = f"{self.flag}: unknown {self.kind} {name!r}" if self.flag else f"unknown {self.kind} {name!r}"
            raise CollapseLabError(f"{what}; choose one of: {', '.join(self.names())}") from None

    def info(self, name: str) -> dict:
        self.get(name)
        return self._info[name]

    def names(self) -> list[str]:
        self.discover()
        return sorted(self._items)

    def help(self) -> str:
        """The names, for CLI help texts."""
        return ", ".join(self.names())

    def __contains__(self, name: str) -> bool:
        self.discover()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def call(self, name: str, *args, **options):
        """Call the plugin with ``options``; an option it does not take is an error that
        lists the ones it has (nothing is ignored silently)."""
        fn = self.get(name)
        accepted = option_names(fn, skip=len(args))
        unknown = sorted(set(options) - set(accepted))
        if unknown:
            raise CollapseLabError(f"{self.kind} {name} has no option {', '.join(unknown)}; its options: "
                                   f"{', '.join(accepted) or 'none'}")
        return fn(*args, **options)


def option_names(fn: Callable, skip: int = 0) -> list[str]:
    """The keyword options of a function (or a class's ``__init__``) after the first
    ``skip`` positional ones; a plugin may not take ``**kwargs`` (it would swallow typos)."""
    params = list(inspect.signature(fn).parameters.values())
    if any(p.kind is p.VAR_KEYWORD for p in params):
        raise TypeError(f"{getattr(fn, '__qualname__', fn)} takes **kwargs; name every option it accepts")
    return [p.name for p in params[skip:] if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
