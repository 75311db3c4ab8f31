"""The local web app: `python -m benchpress.app` or `benchpress serve`.

Pages (each with a shareable URL whose query string holds its state, and each page's
data as JSON under /api/): Predict, Models and Model, Compare, Matrix, Versions, SQL and
Probes. Built on Starlette (routing, static files) with Jinja2 templates, served by
uvicorn; charts are Plotly, whose JavaScript is served from the `plotly` package.

>>> from benchpress.app import build_state, create_app
>>> app = create_app(build_state(Home("path/to/project")))      # doctest: +SKIP
"""

from benchpress.app.model import Engine, load_model
from benchpress.app.server import build_state, create_app

__all__ = ["build_state", "create_app", "load_model", "Engine"]
