"""One library function per user action: what each ``collapse-lab`` command calls between
parsing its options and printing what came back (docs/api.md shows each beside its command).

Every function takes the command's options as explicit keyword arguments, checks them with
the same one-line errors (``CollapseLabError``), says its progress through ``say``/``warn``/
``progress`` callbacks and returns its numbers; none prints to stdout, exits or installs a
signal handler. ``train.train``, ``sweep.sweep``, ``figures.figures``/``tables``,
``ladder.ladder``, ``spectrum.spectrum``/``compare``, ``layers.layers``,
``similarity.cka``/``nc``, ``report.report``, ``runs.runs``, ``theory.prop1``/``thm1``/
``align``, ``units.units``, ``bench.bench``, ``export.export``; ``import`` is
``importer.import_run``.
"""
