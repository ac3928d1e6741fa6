"""One library function per user action: what each ``collapse-lab`` command calls between
parsing its options and printing what came back (docs/api.md shows each beside its command).

Every function takes the command's options as explicit keyword arguments, checks them with
the same one-line errors (``CollapseLabError``), says its progress through a ``say``
callback, and returns its numbers; none prints, exits or installs a signal handler.

===================  ==========================================
action               command
===================  ==========================================
``train.train``      ``collapse-lab train``
``figures.figures``  ``collapse-lab figures``
``figures.tables``   ``collapse-lab tables``
``spectrum.spectrum````collapse-lab spectrum``
``spectrum.compare`` ``collapse-lab compare``
``layers.layers``    ``collapse-lab layers``
``report.report``    ``collapse-lab report``
===================  ==========================================
"""
