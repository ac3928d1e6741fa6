"""``python -m collapse_lab.cli``: the command line, as the ``collapse-lab`` program runs it."""
from . import main

main()
