"""The registry over time: replay of dated source versions and the forecast ledger.

`benchpress.timeline.replay` rebuilds a registry date by date from a plan of dated source
versions (in its own workspace), and `benchpress.timeline.forecasts` keeps and scores what
the predictor said at each snapshot. This package uses the predictor; `benchpress.store`
never imports it.
"""

__all__: list[str] = []
