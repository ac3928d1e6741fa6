"""The catalogue: one spec per figure and table of the papers (``specs/*.yaml``) and the
numbers the papers print (``reference/*.csv``). Data, not code: the machinery that reads
it is ``collapse_lab.analysis``. Installed as ``collapse_lab.analyses`` (``setup.py`` maps
this folder), so a wheel carries it."""
from pathlib import Path

HERE = Path(__file__).resolve().parent
SPECS = HERE / "specs"
REFERENCE = HERE / "reference"
