"""The catalogue's Python API refuses what the command line refuses, in the same one line
(a CollapseLabError), before anything is planned or written."""
from __future__ import annotations

import pytest

from collapse_lab.actions.figures import figures, tables
from collapse_lab.errors import CollapseLabError


@pytest.mark.parametrize("kwargs,words", [
    ({"names": "feddecorr-fig2"}, "names: give a list of entry names"),
    ({"names": ["feddecorr-fig2"], "preset": "quik"}, "--preset quik: choose one of quick, cpu, paper"),
    ({"names": ["feddecorr-fig2"], "overrides": "lr=0.05"}, "overrides: give a mapping"),
    ({"names": ["feddecorr-fig2"], "workers": 0}, "--workers must be >= 1"),
    ({"names": ["feddecorr-fig2"], "stack": -1}, "--stack must be >= 1"),
    ({"names": ["feddecorr-fig2"], "keep": "some"}, "--keep some: choose read or all")])
@pytest.mark.parametrize("call", [figures, tables])
def test_the_api_refuses_what_the_command_refuses(tmp_path, call, kwargs, words):
    kwargs = {**kwargs, "names": kwargs["names"] if call is figures or isinstance(kwargs["names"], str)
              else ["feddecorr-table1"]}
    with pytest.raises(CollapseLabError, match=words.replace("(", r"\(")):
        call(store=tmp_path / "s", out=tmp_path / "o", say=lambda m: None, **kwargs)
    assert not (tmp_path / "s").exists() and not (tmp_path / "o").exists()
