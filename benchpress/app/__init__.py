"""The local web app: `python -m benchpress.app` or `benchpress serve`.

Pages (each with a shareable URL whose query string holds its state, and each page's
data as JSON under /api/): Predict, Models and Model, Compare, Matrix, Versions, SQL and
Probes. Built on Starlette (routing, static files) with Jinja2 templates, served by
uvicorn; charts are Plotly, whose JavaScript is served from the `plotly` package.

>>> from benchpress.app import build_state, create_app
>>> app = create_app(build_state(Home("path/to/project")))      # doctest: +SKIP
"""

__all__ = ["build_state", "create_app", "load_model", "Engine"]


def __getattr__(name):
    # imported on first use, so that `python -m benchpress.app` without the app's extra
    # (Starlette, uvicorn, Jinja2, Plotly) reaches its one-line error instead of a traceback
    if name in ("build_state", "create_app"):
        from benchpress.app import server

        return getattr(server, name)
    if name in ("load_model", "Engine"):
        from benchpress.app import model

        return getattr(model, name)
    raise AttributeError(name)
