"""The layout shows the architecture (issue 44): data flows one way and imports follow it; no
class is built from mixins; importing the package reads and sets no environment variable;
no object is made by ``object.__new__``; predict/ keeps at most 12 modules at its top level.
See docs/architecture.md."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import benchpress

# about 8 s for the tests `make test-quick` runs (scheduling: long modules start first)
pytestmark = pytest.mark.duration(seconds=8)

PACKAGE = Path(benchpress.__file__).resolve().parent

#: The stages in the order data flows through them: a module imports only modules of its
#: own stage or of earlier ones. The foundation (the modules at the package's top level:
#: errors, digest, clock, version, home, scales, executor, blas_threads, yaml_text, the
#: input limits) comes first and imports only itself; the API layer is the one front door
#: that the timeline (replay, the forecast ledger), the report and the front ends build on;
#: the CLI and the app wire everything (and each other: `serve` starts the app, the app
#: renders with the CLI's tables).
STAGES = ("foundation", "adapters", "validate", "store", "predict", "api", "timeline",
          "report", "front")
STAGE_OF_PACKAGE = {"adapters": "adapters", "validate": "validate", "store": "store",
                    "predict": "predict", "api": "api", "timeline": "timeline",
                    "report": "report", "cli": "front", "app": "front"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _stage(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "front"  # the package root: `from benchpress import BenchPress` opens the API
    return STAGE_OF_PACKAGE.get(parts[1], "foundation")


def _sources() -> dict[str, ast.Module]:
    return {_module_name(p): ast.parse(p.read_text(encoding="utf-8"), str(p))
            for p in sorted(PACKAGE.rglob("*.py"))}


def _imported(module: str, tree: ast.Module) -> set[str]:
    """The benchpress modules ``module`` imports (at its top or inside a function)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("benchpress.")}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] == "benchpress":
            if node.module != "benchpress":
                out.add(node.module)
                continue
            for alias in node.names:  # `from benchpress import limits`: a module, or an
                sub = PACKAGE / alias.name  # attribute of the root (__version__, BenchPress)
                if sub.with_suffix(".py").is_file() or sub.is_dir():
                    out.add(f"benchpress.{alias.name}")
                else:
                    out.add({"__version__": "benchpress.version"}.get(alias.name, "benchpress.api"))
    return out


def test_imports_follow_the_data():
    backwards = []
    for module, tree in _sources().items():
        mine = STAGES.index(_stage(module))
        for target in sorted(_imported(module, tree)):
            if STAGES.index(_stage(target)) > mine:
                backwards.append(f"{module} ({_stage(module)}) imports {target} "
                                 f"({_stage(target)})")
    assert not backwards


def test_the_stage_rule_catches_a_backward_import():
    """The check above sees an import inside a function, and through the package root."""
    tree = ast.parse("def f():\n    from benchpress.api.facade import BenchPress\n"
                     "from benchpress import limits, __version__\n")
    found = _imported("benchpress.store.sql", tree)
    assert "benchpress.api.facade" in found and "benchpress.version" in found
    assert STAGES.index(_stage("benchpress.api.facade")) > STAGES.index(_stage("benchpress.store"))
    assert _stage("benchpress.limits") == _stage("benchpress.version") == "foundation"


def test_predict_keeps_at_most_12_modules_at_its_top_level():
    top = [p.name for p in (PACKAGE / "predict").iterdir()
           if p.suffix == ".py" or (p.is_dir() and any(p.glob("*.py")))]
    assert len(top) <= 12, sorted(top)


def test_no_two_modules_share_a_name_across_the_layers():
    """Twins such as artifact.py / predict/artifact.py or limits.py / predict/limits.py
    made a reader guess which one a name meant. A name may repeat only as a package's
    `__init__`/`__main__` or inside one stage's own subpackages."""
    by_name: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        if path.name not in ("__init__.py", "__main__.py"):
            by_name.setdefault(path.stem, set()).add(_stage(_module_name(path)))
    twins = {name: sorted(stages) for name, stages in by_name.items() if len(stages) > 1}
    assert not twins


# -- classes: no mixins ----------------------------------------------------------------------
#: Bases that never count as a second parent: the language's own exceptions and ABC/typing
#: scaffolding (`class MissingExtraError(BenchPressError, ImportError)` is one class that is
#: both a library error and the exception Python raises for a missing module).
STANDARD_MODULES = ("builtins", "abc", "typing", "enum")


def _package_classes() -> list[type]:
    classes, seen = [], set()
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "__main__.py":
            continue
        module = importlib.import_module(_module_name(path))
        todo = list(vars(module).values())
        while todo:
            obj = todo.pop()
            if inspect.isclass(obj) and obj.__module__ == module.__name__ and obj not in seen:
                seen.add(obj)
                classes.append(obj)
                todo += list(vars(obj).values())  # nested classes
    return classes


def _qualname(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _self_attributes(cls: type) -> tuple[set[str], set[str]]:
    """The attributes ``cls``'s own methods read from ``self`` and those they assign."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError):  # a class made at run time without source of its own
        return set(), set()
    reads, writes = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id == "self":
            (writes if isinstance(node.ctx, (ast.Store, ast.Del)) else reads).add(node.attr)
    return reads, writes


def mixin_problems(cls: type, package_bases: set[type]) -> list[str]:
    """What makes ``cls`` (a class defined in benchpress) a mixin or a user of one; the rule:

    1. its name does not end in ``Mixin``;
    2. it has at most one base outside :data:`STANDARD_MODULES` (no multiple inheritance
       of the package's or third parties' classes);
    3. when another class of the package derives from it, every attribute its methods read
       from ``self`` is one it defines itself: in its class body or its bases' (methods,
       class attributes, properties), or assigned to ``self`` by its own methods or its
       package bases' (a base never leans on attributes only a subclass provides).
    """
    problems = []
    if cls.__name__.endswith("Mixin"):
        problems.append("named *Mixin")
    parents = [b for b in cls.__bases__ if b.__module__.split(".")[0] not in STANDARD_MODULES]
    if len(parents) > 1:
        problems.append(f"{len(parents)} parents: {', '.join(b.__name__ for b in parents)}")
    if cls in package_bases:
        reads, writes = _self_attributes(cls)
        for base in cls.__mro__[1:]:
            if base.__module__.startswith("benchpress"):
                writes |= _self_attributes(base)[1]
        missing = sorted(a for a in reads - writes if not hasattr(cls, a))
        if missing:
            problems.append(f"reads attributes it does not define: {', '.join(missing)}")
    return problems


def test_no_class_in_the_package_is_or_uses_a_mixin():
    classes = _package_classes()
    assert len(classes) > 100  # every module was walked, not a handful
    package_bases = {b for c in classes for b in c.__bases__ if b in set(classes)}
    found = {_qualname(c): p for c in classes if (p := mixin_problems(c, package_bases))}
    assert not found


def test_the_mixin_rule_catches_each_kind():
    class ReadsHost:
        def total(self):
            return self.amount + 1  # only a subclass sets `amount`

    class Host(ReadsHost):
        def __init__(self):
            self.amount = 1

    class OwnState:
        def __init__(self):
            self.amount = 1

        def total(self):
            return self.amount + 1

    class Child(OwnState):
        pass

    class Both(OwnState, Host):
        pass

    class LoggingMixin:
        pass

    bases = {ReadsHost, OwnState, Host}
    assert mixin_problems(ReadsHost, bases) == ["reads attributes it does not define: amount"]
    assert mixin_problems(OwnState, bases) == [] and mixin_problems(Child, bases) == []
    assert mixin_problems(Both, bases) == ["2 parents: OwnState, Host"]
    assert mixin_problems(LoggingMixin, bases) == ["named *Mixin"]


# -- objects are built by their constructors; importing reads and sets nothing --------------
def test_no_object_is_made_without_its_constructor():
    """A stored fit is restored through `from_state` classmethods, never
    `object.__new__(...)` plus attributes set from outside."""
    bad = []
    for module, tree in _sources().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "__new__":
                bad.append(f"{module}:{node.lineno}")
    assert not bad


_IMPORT_EVERYTHING = """
import json, os, sys, sysconfig
from pathlib import Path

reads, writes = [], []
here = {package!r}
stdlib = sysconfig.get_paths()["stdlib"]


class Watched(type(os.environ)):
    # os.environ, recording which benchpress file reads or changes it: the nearest caller
    # outside the standard library (os.getenv, MutableMapping.setdefault, ...) and this script
    def _who(self):
        frame = sys._getframe(2)
        while frame is not None and (frame.f_code.co_filename.startswith(("<frozen", stdlib))
                                     or frame.f_code.co_filename == "<string>"):
            frame = frame.f_back
        name = frame.f_code.co_filename if frame is not None else ""
        return name if name.startswith(here) else None

    def __getitem__(self, key):
        if (who := self._who()) is not None:
            reads.append((who, key))
        return super().__getitem__(key)

    def __setitem__(self, key, value):
        if (who := self._who()) is not None:
            writes.append((who, key))
        super().__setitem__(key, value)

    def __delitem__(self, key):
        if (who := self._who()) is not None:
            writes.append((who, key))
        super().__delitem__(key)


os.environ = Watched(os.environ._data, os.environ.encodekey, os.environ.decodekey,
                     os.environ.encodevalue, os.environ.decodevalue)
hooks = []


def watched_call(name, call):
    # a process-wide registration (exit handlers, fork handlers, matplotlib's backend),
    # recorded when a benchpress file makes it itself (the standard library's own, made
    # while a benchpress module imports it, are not the package's)
    def wrapper(*args, **kwargs):
        caller = sys._getframe(1).f_code.co_filename
        if caller.startswith(here):
            hooks.append((caller, name))
        return call(*args, **kwargs)
    return wrapper


import atexit, matplotlib
atexit.register = watched_call("atexit.register", atexit.register)
os.register_at_fork = watched_call("os.register_at_fork", os.register_at_fork)
matplotlib.use = watched_call("matplotlib.use", matplotlib.use)
before = dict(os.environ)
for path in sorted(Path(here).rglob("*.py")):
    if path.name == "__main__.py":
        continue
    parts = path.relative_to(Path(here).parent).with_suffix("").parts
    __import__(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
print(json.dumps({{"reads": reads, "writes": writes, "hooks": hooks,
                  "pyplot": "matplotlib.pyplot" in sys.modules,
                  "changed": sorted(k for k in set(before) | set(os.environ)
                                    if before.get(k) != os.environ.get(k))}}))
"""


def test_importing_every_module_reads_and_sets_no_environment_variable_nor_hook():
    """`benchpress.limits` read BENCHPRESS_* at import and the package root set
    _RJEM_MALLOC_CONF; now the limits are read when a command asks for them and the memory
    setting is made where a command starts (the CLI, the app). Importing registers no
    process-wide hook either: the SQL query server's exit and fork handlers are registered
    when it first starts, and the report draws on figures of its own (no pyplot, no
    `matplotlib.use`)."""
    code = _IMPORT_EVERYTHING.format(package=str(PACKAGE))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=PACKAGE.parent)
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    assert doc["reads"] == [] and doc["writes"] == []
    assert doc["hooks"] == [] and not doc["pyplot"]
    # (polars sets its allocator's variable when it loads, whoever imports it)
    assert not [k for k in doc["changed"] if k.startswith("BENCHPRESS")]


def test_the_environment_watch_sees_a_read_at_import(tmp_path):
    """The check above is not blind: a module of the package that reads a variable at
    import is reported (here a stand-in package laid out like benchpress)."""
    fake = tmp_path / "benchpress"
    fake.mkdir()
    (fake / "__init__.py").write_text("import os\nSETTING = os.environ.get('HOME')\n")
    (fake / "setter.py").write_text("import os\nos.environ.setdefault('BENCHPRESS_X', '1')\n")
    (fake / "hooks.py").write_text("import atexit, os, matplotlib\natexit.register(print)\n"
                                   "os.register_at_fork(after_in_child=print)\n"
                                   "matplotlib.use('Agg')\n")
    code = _IMPORT_EVERYTHING.format(package=str(fake))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=tmp_path)
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    assert {key for _, key in doc["reads"]} == {"HOME", "BENCHPRESS_X"}
    assert [key for _, key in doc["writes"]] == ["BENCHPRESS_X"]
    assert doc["changed"] == ["BENCHPRESS_X"]
    assert sorted(name for _, name in doc["hooks"]) == ["atexit.register", "matplotlib.use",
                                                         "os.register_at_fork"]


@pytest.mark.parametrize("entry", ["benchpress.cli", "benchpress.app.__main__"])
def test_a_command_sets_the_memory_setting_where_it_starts(entry):
    """What importing no longer does, starting a command does: polars' allocator gives
    freed memory back (the setting must be in place before polars loads)."""
    code = ("import os, sys\n"
            f"import {entry} as entry\n"
            "assert '_RJEM_MALLOC_CONF' not in os.environ and 'polars' not in sys.modules\n"
            "from benchpress.cli import start_command\n"
            "start_command()\n"
            "print(os.environ['_RJEM_MALLOC_CONF'])\n")
    env = {k: v for k, v in __import__("os").environ.items() if k != "_RJEM_MALLOC_CONF"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env, cwd=PACKAGE.parent)
    assert "retain:false" in out.stdout
