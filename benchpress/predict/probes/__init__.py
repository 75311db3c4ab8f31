"""Probe sets: which few benchmarks to run on a new model to recover the rest of its row.

- :mod:`~benchpress.predict.probes.search`: `ProbeSearch`, scoring probe sets by
  transcript recovery;
- :mod:`~benchpress.predict.probes.fits`: its held-out fits and batched scoring;
- :mod:`~benchpress.predict.probes.select`: greedy forward selection with a swap pass;
- :mod:`~benchpress.predict.probes.results`: what a search reports.
"""

__all__: list[str] = []
