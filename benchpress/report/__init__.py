"""The HTML report page: renders what :class:`~benchpress.api.BenchPress` computes
(interval coverage, probes, ranking, drift); the CLI command ``report`` calls it."""

__all__ = ["FIGURES", "build_report"]


def __getattr__(name):
    # the page pulls in matplotlib (~0.4 s); import it only when a report is made
    if name in ("FIGURES", "build_report"):
        from benchpress.report import page

        return getattr(page, name)
    raise AttributeError(name)
