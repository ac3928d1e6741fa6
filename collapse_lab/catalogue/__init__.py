"""The papers' figures and tables as a library: plan an entry's runs, train the missing ones,
render, check the claims, and climb the ladder of scales (docs/api.md, docs/scale.md).
``actions.figures`` (``collapse_lab.figures``, ``collapse_lab.tables``) and the ladder
command are the doors a user takes; the modules here are their parts."""
