"""The catalogue: one spec per figure and table of the papers (``specs/*.yaml``), the
numbers the papers print (``reference/*.csv``) and the ladders of docs/scale.md
(``ladder/*.yaml``). Data, not code: nothing here imports the package, which reads these
folders through ``collapse_lab.analysis.catalogue`` alone. Installed as
``collapse_lab.analyses`` (``setup.py`` maps this folder), so a wheel carries it."""
from pathlib import Path

HERE = Path(__file__).resolve().parent
SPECS = HERE / "specs"
REFERENCE = HERE / "reference"
LADDERS = HERE / "ladder"
