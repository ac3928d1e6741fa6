"""A run named: options -> ``RunConfig`` (``resolve``), sweep specs -> runs (``expand``), the
speed options checked (``speed``), the backends' training options checked
(``backend``). The one resolver of ``train``, ``sweep``, the catalogue
and the API. It reads the plugins' declarations (data sets, models, partitions, methods,
regularizers, augmentation) and the store's naming, never the trainer: naming the runs of
a figure loads nothing that trains."""
