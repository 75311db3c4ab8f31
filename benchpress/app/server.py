"""The web app: Starlette routes, Jinja2 pages and JSON under /api/ (read-only: GET only).

Every page's state is in its URL's query string (shareable), and every page's data is
the JSON of the matching /api/ route (`views`). Plotly's JavaScript is served from the
installed `plotly` package (no CDN: the app works offline).
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import (
    FileResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from benchpress.errors import BadInputError, BenchPressError, UsageError
from benchpress.home import Home
from benchpress.store.snapshot import resolve_snapshot
from benchpress.store.tables import registry_exists

from benchpress.app import views
from benchpress.app.guard import AllowedHosts, Busy, SqlGate, cut
from benchpress.app.jobs import CLIENT, Jobs
from benchpress.app.model import Engine, load_model, unknown_names_logged
from benchpress.app.extras_views import compare_csv, glossary, predict_csv
from benchpress.app.pretrained import PretrainedView, served_label
from benchpress.app.registry import EXAMPLE_SQL, RegistryView

__all__ = ["build_state", "create_app", "PAGES", "JOB_PATHS"]

log = logging.getLogger("benchpress.app")
HERE = Path(__file__).parent
PAGES = [("predict", "Predict"), ("models", "Models"), ("compare", "Compare"),
         ("matrix", "Matrix"), ("versions", "Versions"), ("sql", "SQL"), ("probes", "Probes"),
         ("help", "Help")]
#: the routes that start background work: refused to a cross-site caller (`guard.cross_site`)
JOB_PATHS = ("/api/probes", "/api/drift")


def build_state(home: Home, snapshot: str | None = None, *, sources: list[str] | None = None,
                method: str = "default") -> views.AppState:
    """Load the model and the registry, and precompute everything (logs the time). With no
    registry built in `home` and no snapshot asked for, serve the pre-fit model shipped in
    the package (predict, compare, probes; the header says so)."""
    t0 = time.perf_counter()
    if snapshot is None and not registry_exists(home.registry):
        return _pretrained_state(home, t0, sources=sources, method=method)
    bp = load_model(home, snapshot, sources=sources, method=method)
    engine = Engine(bp)
    registry = RegistryView(home, bp.folder or resolve_snapshot(home, snapshot))
    seconds = time.perf_counter() - t0
    log.info("startup: %.1f s (%d models x %d benchmarks, %s)", seconds,
             *bp.matrix.values.shape, snapshot or "current registry")
    return views.AppState(home, engine, registry, Jobs(), snapshot, sources, seconds)


def _pretrained_state(home: Home, t0: float, *, sources, method: str) -> views.AppState:
    from benchpress.api import BenchPress

    if sources or method != "default":
        raise UsageError(f"{home.registry}: no registry here, so the app serves the pre-fit "
                         "model (method default, its own sources): leave out --sources and "
                         "--method, or give --home a built registry")
    bp = BenchPress.from_pretrained(on_unknown=unknown_names_logged)
    served = served_label(bp)
    seconds = time.perf_counter() - t0
    log.info("startup: %.1f s (%d models x %d benchmarks, %s)", seconds,
             *bp.matrix.values.shape, served)
    return views.AppState(home, Engine(bp), PretrainedView(bp), Jobs(), None, None, seconds,
                          served=served)


def _plotly_js() -> Path:
    import plotly

    return Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


class _JSON(JSONResponse):
    def render(self, content) -> bytes:
        return json.dumps(views.clean(content), allow_nan=False, default=str,
                          separators=(",", ":")).encode("utf-8")


def _status(exc: BenchPressError) -> int:
    return 404 if isinstance(exc, views.NotFound) else 503 if isinstance(exc, Busy) else 400


def _error(exc: BenchPressError) -> _JSON:
    return _JSON({"error": cut(str(exc))}, status_code=_status(exc))


def _fault(exc: Exception) -> str:
    """An error no check foresaw as one line, logged (no traceback); its reply is a 500."""
    line = cut(f"internal error ({type(exc).__name__}: {exc})")
    log.error("%s", line)
    return line


def create_app(state: views.AppState, *, hosts=None) -> Starlette:
    """The ASGI app serving `state` (see `build_state`), answering requests whose Host
    header is one of `hosts` (default: the loopback names; see `guard.allowed_hosts`);
    a cross-site caller of `JOB_PATHS` is refused (`guard.AllowedHosts`)."""
    gate = SqlGate()
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    templates.env.filters["num"] = _fmt
    templates.env.filters["setting"] = _setting
    templates.env.globals.update(pages=PAGES)
    q = lambda r, k, d=None: r.query_params.get(k, d)  # noqa: E731

    async def run(compute, request: Request, sql: bool):
        """`compute(request)` in a worker thread (a slow query does not hold up other
        pages); a SQL one first waits its turn at the gate, holding no thread."""
        CLIENT.set(request.client.host if request.client else "")  # whose jobs (`Jobs`)
        if not sql:
            return await run_in_threadpool(compute, request)
        async with gate():
            return await run_in_threadpool(compute, request)

    def api(compute, *, sql: bool = False):
        """A JSON endpoint: BenchPressError -> {"error": one line}, 400 (404 not found,
        503 busy); anything else -> one line, 500."""
        async def endpoint(request: Request) -> Response:
            try:
                payload = await run(compute, request, sql)
            except BenchPressError as exc:
                return _error(exc)
            except Exception as exc:  # noqa: BLE001 - never a traceback to the client
                return _JSON({"error": _fault(exc)}, status_code=500)
            if isinstance(payload, Response):
                return payload
            status = 202 if payload.get("status") in ("queued", "running") else 200
            return _JSON(payload, status_code=status)
        return endpoint

    def page(template: str, compute=None, title: str = "", *, sql: bool = False):
        """An HTML page; `compute` (optional) gives its data, or an error shown on it."""
        async def endpoint(request: Request) -> Response:
            data, error, status = None, None, 200
            if compute is not None:
                try:
                    data = await run(compute, request, sql)
                except BenchPressError as exc:
                    error, status = cut(str(exc)), _status(exc)
                except Exception as exc:  # noqa: BLE001 - never a traceback to the client
                    error, status = _fault(exc), 500
            ctx = {"data": data, "error": error, "q": dict(request.query_params),
                   "query": request.url.query,
                   "served": state.label, "title": title, "active": template.split(".")[0],
                   "example_sql": EXAMPLE_SQL, "snapshots": state.registry.snapshots(),
                   "no_registry": state.no_registry}
            ctx.update({k: cut(v, 200) for k, v in request.path_params.items()})
            return templates.TemplateResponse(request, template, ctx, status_code=status)
        return endpoint

    def sql_csv(request: Request) -> Response:
        text, truncated = views.sql_csv(state, q(request, "q"))
        return PlainTextResponse(text, media_type="text/csv", headers={
            "Content-Disposition": 'attachment; filename="benchpress-query.csv"',
            "X-BenchPress-Truncated": "1" if truncated else "0"})

    async def status(request: Request) -> Response:
        """In the event loop, not a worker thread: answers while every thread is busy."""
        return _JSON({"served": state.label, "startup_seconds": round(state.startup_seconds, 2),
                      "timings": state.engine.timings, "method": state.engine.bp.method,
                      "shape": list(state.engine.values.shape)})

    def download(name: str, rows):
        """A CSV download of `rows(request)` (text), named benchpress-<name>.csv."""
        def endpoint(request: Request) -> Response:
            return PlainTextResponse(rows(request), media_type="text/csv", headers={
                "Content-Disposition": f'attachment; filename="benchpress-{name}.csv"'})
        return endpoint

    def model_api(r):
        return views.model(state, r.path_params["model_id"])

    def compare_data(r):
        given = [m for m in (q(r, "models") or "").split(",") if m.strip()]
        if len(given) < 2 and not r.query_params.getlist("new"):
            return None  # the form, filled with the one model (the model page's link)
        return views.compare(state, q(r, "models"), r.query_params.getlist("new"))

    def diff_data(r):
        return views.diff(state, q(r, "from"), q(r, "to")) if q(r, "from") and q(r, "to") else None

    def sql_data(r):
        return views.sql(state, q(r, "q")) if q(r, "q") else None

    def whole(r, name="k"):
        text = q(r, name)
        try:
            return int(text) if text else None
        except ValueError:
            raise BadInputError(f"{name} is '{text}', not a whole number") from None

    routes = [
        Route("/", lambda r: RedirectResponse("/predict")),
        Route("/predict", page("predict.html", title="Predict")),
        Route("/models", page("models.html", lambda r: views.models(state), "Models")),
        Route("/model/{model_id:path}", page("model.html", model_api, "Model")),
        Route("/compare", page("compare.html", compare_data, "Compare")),
        Route("/matrix", page("matrix.html", lambda r: views.models(state), "Matrix")),
        Route("/versions", page("versions.html", diff_data, "Versions")),
        Route("/sql", page("sql.html", sql_data, "SQL", sql=True)),
        Route("/probes", page("probes.html", title="Probes")),
        Route("/help", page("help.html", lambda r: glossary(state), "Help")),
        Route("/api/help", api(lambda r: glossary(state))),
        Route("/api/predict.csv", api(download("prediction", lambda r: predict_csv(
            state, q(r, "scores"), q(r, "metadata"))))),
        Route("/api/compare.csv", api(download("comparison", lambda r: compare_csv(
            state, q(r, "models"), r.query_params.getlist("new"))))),
        Route("/api/status", status),
        Route("/api/benchmarks", api(lambda r: views.benchmarks(state))),
        Route("/api/models", api(lambda r: views.models(state))),
        Route("/api/resolve", api(lambda r: views.resolve(state, q(r, "names")))),
        Route("/api/predict", api(lambda r: views.predict(state, q(r, "scores"),
                                                          q(r, "metadata")))),
        Route("/api/model/{model_id:path}", api(model_api)),
        Route("/api/compare", api(lambda r: views.compare(state, q(r, "models"),
                                                          r.query_params.getlist("new")))),
        Route("/api/matrix", api(lambda r: views.matrix(
            state, provider=q(r, "provider"), benchmarks=q(r, "benchmarks"),
            after=q(r, "after"), before=q(r, "before"), search=q(r, "search"),
            sort=q(r, "sort"), desc=q(r, "desc", "1") != "0", limit=_int(q(r, "limit"), 60),
            show=q(r, "show", "all")))),
        Route("/api/cell", api(lambda r: views.cell(state, q(r, "model"), q(r, "benchmark")))),
        Route("/api/versions", api(lambda r: views.versions(state))),
        Route("/api/diff", api(lambda r: views.diff(state, q(r, "from"), q(r, "to")))),
        Route("/api/drift", api(lambda r: views.drift(state, q(r, "from"), q(r, "to")))),
        Route("/api/sql", api(lambda r: views.sql(state, q(r, "q")), sql=True)),
        Route("/api/sql.csv", api(sql_csv, sql=True)),
        Route("/api/probes", api(lambda r: views.probes(state, whole(r), whole(r, "max_models")))),
        Route("/static/plotly.min.js", lambda r: FileResponse(_plotly_js())),
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    @contextlib.asynccontextmanager
    async def lifespan(app):
        yield
        state.jobs.shutdown()

    app = Starlette(routes=routes, lifespan=lifespan,
                    middleware=[Middleware(AllowedHosts, hosts=hosts, guarded=JOB_PATHS)])
    app.state.bp = state
    return app


def _int(text: str | None, default: int) -> int:
    try:
        return int(text) if text else default
    except ValueError:
        raise BadInputError(f"'{text}' is not a whole number") from None


def _fmt(value, digits: int = 1) -> str:
    """Jinja filter: a number rounded for display, '' for None."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _setting(text: str | None) -> str:
    """Jinja filter: a reported setting (JSON or text) shortened to its mode and effort."""
    if not text:
        return ""
    try:
        doc = json.loads(text)
    except ValueError:
        return text
    if not isinstance(doc, dict):
        return str(doc)
    effort = doc.get("effort")
    parts = [doc.get("mode"), f"effort {effort}" if effort not in (None, "", "default") else None]
    return ", ".join(str(p) for p in parts if p) or "default"
