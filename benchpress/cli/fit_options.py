"""The options of every command that fits the predictor: --snapshot, --sources, --method,
--param."""

from __future__ import annotations

import functools
import warnings
from pathlib import Path

import click

from benchpress.cli.common import handle_errors, home_option, split_list
from benchpress.cli.notes import say, say_once
from benchpress.errors import RegistryError, UsageError, listed
from benchpress.predict.factory import available_methods, make_predictor

__all__ = ["matrix_options", "folds_options", "parse_params", "check_params", "method_fields",
           "method_choice",
           "provenance_fields", "pretrained_note", "param_option"]


def method_choice(help_text: str) -> dict:
    """The `click.option` keywords of an option that names a predictor: one of
    `available_methods()`, listed in the help text (wrapped to the terminal), not in the
    metavar (one line of 100 columns)."""
    names = available_methods()
    return {"type": click.Choice(names), "metavar": "METHOD",
            "help": f"{help_text} METHOD: {', '.join(names)}."}


def parse_params(pairs, *methods: str) -> dict:
    """``("n_starts=60", "rank=3")`` -> ``{"n_starts": 60, "rank": 3}``: values read as YAML
    scalars (numbers, true/false, null; anything else stays a string). With ``methods``,
    each name and value is checked against those predictors' parameters (:func:`check_params`).
    """
    import yaml

    from benchpress import yaml_text

    params = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--param {pair!r}: expected KEY=VALUE, e.g. n_starts=60")
        try:
            params[key.strip()] = yaml_text.safe_load(value) if value.strip() else None
        except yaml.YAMLError:
            params[key.strip()] = value
    for method in dict.fromkeys(methods):
        check_params(method, params)
    return params


def warn_unknown(kind: str, names: list[str]) -> None:
    """The one-line stderr warning for names left out under --ignore-unknown."""
    click.echo(f"warning: unknown {kind}(s) ignored (--ignore-unknown): {listed(names, quote=False)}",
               err=True)


def _kind(default) -> tuple[str, tuple]:
    """What a parameter whose default is ``default`` accepts: (description, types)."""
    if isinstance(default, bool):
        return "true or false", (bool,)
    if isinstance(default, int):
        return "an integer", (int,)
    if isinstance(default, float) or default is None:
        return "a number", (int, float)
    if isinstance(default, tuple) and any(isinstance(v, float) for v in default):
        return "numbers separated by commas, e.g. 0.9,0.8", (tuple,)
    if isinstance(default, tuple):
        return "integers separated by commas, e.g. 2,3", (tuple,)
    return "text", (str,)


def _as_ints(value, kind=int):
    """A tuple-of-integers (``kind=float``: numbers) parameter as typed (``3``, ``2,3``,
    ``[2, 3]``, empty) -> a tuple, or ``value`` unchanged when it is not one (then refused
    by the caller; ``true`` reads as "True", which is no number)."""
    items = value if isinstance(value, list) else [] if value is None else str(value).split(",")
    try:
        return tuple(kind(str(v).strip()) for v in items if str(v).strip())
    except ValueError:
        return value


def check_params(method: str, params: dict) -> None:
    """Refuse, as one line, a name ``method``'s predictor does not take (with the closest
    name and the full list) or a value of the wrong type (naming the type expected).

    Raises
    ------
    UsageError
    """
    import difflib

    from benchpress.predict.estimator import flat_params

    flat = flat_params(make_predictor(method))
    flat.pop("method", None)
    # a part's parameter by its name alone, where one part has it (a blend's n_starts)
    alone = {}
    for name in flat:
        alone.setdefault(name.rsplit("__", 1)[-1], []).append(name)
    defaults = {**{k: flat[v[0]] for k, v in alone.items() if len(v) == 1}, **flat}
    for key, value in params.items():
        if key not in defaults:
            close = difflib.get_close_matches(key, list(defaults), n=1)
            raise UsageError(f"unknown parameter '{key}' for method '{method}'"
                             + (f"; did you mean '{close[0]}'?" if close else "")
                             + f" (its parameters: {', '.join(flat) or 'none'})")
        what, types = _kind(defaults[key])
        if isinstance(defaults[key], tuple):
            floats = any(isinstance(v, float) for v in defaults[key])
            value = params[key] = _as_ints(value, float if floats else int)
        ok = (isinstance(value, types) and not (isinstance(value, bool) and bool not in types)
              or (value is None and defaults[key] is None))
        if not ok:
            raise UsageError(f"--param {key}={value}: '{key}' of method '{method}' must be "
                             f"{what} (default {defaults[key]!r})")


def method_fields(bp) -> dict:
    """``{"method": ..., "params": {...}}`` for JSON output: ``params`` holds exactly what the
    user passed with --param (also a value equal to the default; ``{}`` when none)."""
    ctx = click.get_current_context(silent=True)
    given = ctx.meta.get(_GIVEN) if ctx is not None else None
    return {"method": bp.method, "params": dict(given) if given is not None else dict(bp.params)}


def provenance_fields(bp) -> dict:
    """What made a prediction, for the JSON of `predict` and `compare`: ``sources`` and
    ``snapshot`` (`BenchPress.provenance`), then ``method`` and ``params`` as in
    :func:`method_fields`."""
    return {**bp.provenance(), **method_fields(bp)}


def pretrained_note(bp, fmt: str, home=None) -> dict:
    """When `bp` predicts from other sources than `BenchPress.from_pretrained()` (see
    `BenchPress.pretrained_difference`): for people (table format) a note on stderr, once
    per session in `home` (`benchpress.cli.notes`), for programs ``{"pretrained_note":
    ...}`` to put in the JSON (always); else nothing."""
    note = bp.pretrained_difference()
    if note is None:
        return {}
    if fmt == "table":
        say_once(f"note: {note}", home)
    return {"pretrained_note": note}


_GIVEN = "benchpress.given_params"


def param_option(f):
    """`--param KEY=VALUE` (repeatable) -> `params`, the raw pairs: the command turns them
    into a dict with :func:`parse_params` inside its error handling."""
    return click.option("--param", "params", multiple=True, metavar="KEY=VALUE",
                        help="Override one of the predictor's parameters (repeatable), e.g. "
                             "--param n_starts=60 --param regression_weight=0.5.")(f)


def matrix_options(f=None, *, stored_fit_answers=None, pretrained: bool = False):
    """--snapshot, --sources, --method and --param -> `bp: BenchPress` holding the one
    predictor object `make_predictor(method, **params)` (validated here, before any fit;
    fitted lazily) and the home's `FitStore` (the fit of an unchanged matrix is reused).
    `stored_fit_answers(kwargs)`: True when the command, called with `kwargs`, needs no
    more than a stored fit (predicting a new model): then a stored fit of the folder's
    current files stands in for the matrix (`BenchPress.from_stored_fit`), which is read
    only when there is none. `pretrained`: the command also takes `--pretrained [NAME|DIR]`,
    a pre-fit model (`BenchPress.from_pretrained`), which needs no registry. The command
    runs inside `handle_errors`: it needs no decorator of its own for that."""
    if f is None:
        return functools.partial(matrix_options, stored_fit_answers=stored_fit_answers,
                                 pretrained=pretrained)
    if pretrained:
        f = _pretrained_option(f)

    @click.option("--snapshot", default=None, help="Snapshot id, tag or 'latest' (default: live registry).")
    @click.option("--sources", default=None, help="Use only these sources, e.g. 'benchpress,epoch'.")
    @click.option("--method", default="default", show_default=True,
                  **method_choice("Predictor."))
    @param_option
    @click.option("--ignore-unknown", is_flag=True,
                  help="Leave out unknown model/benchmark names with a warning (default: error).")
    @home_option
    @functools.wraps(f)
    @handle_errors  # covers loading the matrix and the command body
    def wrapper(*args, snapshot, sources, method, params, ignore_unknown, home, **kwargs):
        from benchpress.api import BenchPress  # the predictor loads only where it is used
        from benchpress.api.fit_store import FitStore
        from benchpress.store.tables import registry_exists

        fitted_elsewhere = kwargs.pop("pretrained", None)
        if fitted_elsewhere is not None:
            bp = _pretrained(fitted_elsewhere, ignore_unknown=ignore_unknown,
                             on_unknown=warn_unknown)
            return f(*args, bp=bp, home=home, **kwargs)
        if pretrained and snapshot is None and not registry_exists(home.registry):
            raise RegistryError(f"{home.registry}: no registry built yet; run `benchpress "
                                "build`, or answer from the shipped pre-fit model with "
                                "--pretrained")
        given = parse_params(params, method)
        click.get_current_context().meta[_GIVEN] = given
        opened = {"sources": split_list(sources), "predictor": make_predictor(method, **given),
                  "store": FitStore.for_home(home), "ignore_unknown": ignore_unknown,
                  "on_unknown": warn_unknown}
        bp = None
        if stored_fit_answers is not None and stored_fit_answers(kwargs):
            bp = BenchPress.from_stored_fit(home, snapshot, **opened)
        if bp is None:
            bp = BenchPress.from_snapshot(home, snapshot, **opened)
        return f(*args, bp=bp, home=home, **kwargs)
    return wrapper


def _pretrained_option(f):
    return click.option(
        "--pretrained", default=None, is_flag=False, flag_value="", metavar="[NAME|DIR]",
        help="Answer from a pre-fit model instead of the registry: the one shipped in the "
             "package (no value), another shipped one by NAME, or an artifact folder "
             "(`benchpress fit --out DIR`). Needs no registry.")(f)


def _pretrained(name: str, **options):
    """`BenchPress.from_pretrained(name or None, **options)`, refusing the options typed
    beside it that a pre-fit model fixes: it holds its own snapshot, sources, method and
    parameters."""
    from click.core import ParameterSource

    from benchpress.api import BenchPress

    ctx = click.get_current_context()
    typed = [p.opts[0] for p in ctx.command.params
             if p.name in ("snapshot", "sources", "method", "params")
             and ctx.get_parameter_source(p.name) is ParameterSource.COMMANDLINE]
    if typed:
        raise UsageError(f"--pretrained predicts from a fit made on its own snapshot, sources "
                         f"and method: give it without {', '.join(typed)}")
    return BenchPress.from_pretrained(name or None, **options)


def noted_folds(bp, folds_file=None, **options):
    """`bp.folds(folds_file, **options)`, what it warns of (in Python: the held-out cells
    of the file that the matrix does not hold) said as notes."""
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always", UserWarning)
        folds = bp.folds(folds_file, **options)
    for w in warned:
        say(f"note: {w.message}")
    return folds


def folds_options(f):
    """--folds FILE | --make-folds K (with --seed, --n-seeds, --folds-sources) -> `folds`,
    made by `BenchPress.folds`; goes below `matrix_options`, which supplies `bp`. A command
    with a `--new-models` option (evaluate) gets, when it is given, `folds=None` and
    `seeds` (--seed, --seed+1, ...: one split of whole models each), else `seeds=None`."""
    @click.option("--folds", "folds_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                  help="Fold file: the published index form or "
                       "{'folds': [{'test_cells': [[model_id, benchmark_id], ...]}]}.")
    @click.option("--folds-sources", default=None,
                  help="Index folds count rows/columns of these sources' matrix (e.g. 'benchpress').")
    @click.option("--make-folds", "n_folds", type=int, default=None,
                  help="Make new per-model K-fold partitions instead of reading a file.")
    @click.option("--seed", type=int, default=42, show_default=True,
                  help="With --make-folds or --new-models: seed of the (first) random "
                       "partition.")
    @click.option("--n-seeds", type=click.IntRange(min=1), default=1, show_default=True,
                  help="With --make-folds or --new-models: how many partitions, seeds --seed, "
                       "--seed+1, ...")
    @functools.wraps(f)
    def wrapper(*args, folds_file, folds_sources, n_folds, seed, n_seeds, bp, **kwargs):
        whole = "new_models" in kwargs  # a command that also holds out whole models
        if whole and (kwargs["new_models"] is not None or kwargs.get("temporal")):
            # no folds: seeds of the model split (--new-models) or of the reveal (--temporal)
            mode = "--temporal" if kwargs.get("temporal") else "--new-models"
            if folds_file or n_folds or folds_sources:
                raise UsageError(f"{mode} holds out whole models: give it without "
                                 "--folds, --make-folds or --folds-sources")
            return f(*args, folds=None, seeds=tuple(range(seed, seed + n_seeds)), bp=bp,
                     **kwargs)
        if whole and kwargs.get("later_ref") is not None:
            raise UsageError("--later is the snapshot-to-snapshot form of --temporal: "
                             "give it with --temporal")
        if bool(folds_file) == bool(n_folds):
            raise UsageError("give either --folds FILE or --make-folds K"
                             + (" (or --new-models K, or --temporal)" if whole else ""))
        folds = noted_folds(bp, folds_file, n_folds=n_folds, seed=seed, n_seeds=n_seeds,
                            folds_sources=split_list(folds_sources))
        return f(*args, folds=folds, bp=bp, **({"seeds": None} if whole else {}), **kwargs)
    return wrapper
