# Entry points for a fresh machine (Python >= 3.11, git and make; `make test` also wants
# Chromium, which `system-deps` installs with apt-get where it can):
#   make main        - install, then run the whole pipeline (dvc repro) offline on the default data;
#                      on a fresh clone it re-makes what dvc.lock records, byte for byte (git
#                      status stays clean; docs/guide/pipeline.md: "A fresh clone and dvc.lock")
#   make test        - install, build the docs (strict), then run the whole test suite with the
#                      package's doctests (CI)
#   make test-quick  - the same without the tests marked slow (the end-to-end DVC runs, the
#                      browser, kill loops, replays), on two workers: 1.4-4.7 minutes, by the machine's speed
#                      (docs/development.md has the measurements)
#   make docs        - the documentation site (docs/, mkdocs.yml) in site/, strict
# Data come from the mirror folder in params.yaml, ../shared/data (docs/install.md: "Offline use").

VENV ?= .venv
PY := $(VENV)/bin/python
# empty: the pipeline reads params.yaml's data.mirror; `make main MIRROR=DIR` overrides it
MIRROR ?=

.PHONY: install system-deps main test test-quick docs pretrained clean replay

# what the pipeline runs with (the package and its [all] extras); `make install` (and so
# `make test`) takes the test and docs tools in the same pip call, one resolve and one
# editable build (11 s less than installing them on top), and counts as the first too.
# `make main` on a fresh machine installs only the first (16 s less).
# `make install` leaves out pip's byte-compiling of every installed file (--no-compile:
# 10,000 files, 25-30 s of a 50 s install): the tests run with byte-code caches written
# (PYTEST below), so each module they import is compiled once, on its first import.
$(VENV)/.installed-main: EXTRAS := all
$(VENV)/.installed: EXTRAS := all,test,docs
$(VENV)/.installed: COMPILE := --no-compile
$(VENV)/.installed-main $(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	-$(PY) -m pip uninstall -q -y benchpress-registry 2>/dev/null  # the distribution's old name
	$(PY) -m pip install -q $(COMPILE) -e '.[$(EXTRAS)]'
	touch $@ $(if $(filter %/.installed,$@),$(VENV)/.installed-main)

install: $(VENV)/.installed

main: $(VENV)/.installed-main
	$(if $(MIRROR),BENCHPRESS_MIRROR=$(MIRROR)) PATH=$(abspath $(VENV))/bin:$$PATH $(VENV)/bin/dvc repro
	PATH=$(abspath $(VENV))/bin:$$PATH $(VENV)/bin/benchpress summary
	@if git rev-parse --git-dir >/dev/null 2>&1 && ! git diff --quiet -- dvc.lock metrics plots; then \
	  echo "make main: dvc.lock or metrics/ changed (git diff): they were recorded by other code than this checkout's, or on another CPU (its BLAS moves the last digits); see docs/guide/pipeline.md, 'A fresh clone and dvc.lock'" >&2; fi

# The one system package the tests need: headless Chromium, in which tests/test_report.py opens
# the HTML report to check that every figure renders. Any of these names on PATH will do;
# otherwise Debian's `chromium` package is installed with apt-get (as root), or make stops
# and says what to install.
CHROMIUM := chromium chromium-browser google-chrome
system-deps:
	@for exe in $(CHROMIUM); do command -v $$exe >/dev/null 2>&1 && exit 0; done; \
	echo "system-deps: no Chromium on PATH ($(CHROMIUM)); the report test renders the HTML report in it"; \
	if ! command -v apt-get >/dev/null 2>&1; then \
	  echo "system-deps: no apt-get here: install Chromium yourself, then run make test again" >&2; exit 1; fi; \
	if [ "$$(id -u)" -ne 0 ]; then \
	  echo "system-deps: apt-get needs root: run 'sudo apt-get install -y chromium', then make test again" >&2; exit 1; fi; \
	echo "system-deps: installing Debian's chromium package (apt-get update; apt-get install -y chromium)"; \
	apt-get update -q && apt-get install -y -q chromium \
	  || { echo "system-deps: apt-get could not install chromium (see above): install Chromium yourself, then run make test again" >&2; exit 1; }

# Both cores (pytest-xdist): whole modules go to one worker (`--dist loadscope`), so a
# module's fixtures (built registries, fits, servers) are made once, and the longest modules
# are handed out first (tests/conftest.py orders them by `slow(seconds=...)`; xdist keeps
# that order with --no-loadscope-reorder), the short ones fill in around them.
# TEST_WORKERS=1 runs in this one process.
TEST_WORKERS ?= 2
PYTEST_PARALLEL := $(if $(filter-out 1,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder)
# Python's byte-code caches written (__pycache__/, ignored by git and DVC) even where the
# environment says PYTHONDONTWRITEBYTECODE: else each of the two workers compiles every test
# module (pytest's assertion rewriting) and the package anew, and so does each of the
# hundreds of processes the tests start (the CLI, DVC's stages, query servers): collecting
# the tests took 10 s of CPU per worker instead of 3.6 s
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest

# The documentation site in site/ (MkDocs; mkdocstrings reads the docstrings, mkdocs-click
# the commands, docs/hooks/figures.py draws the figures from metrics/ and dvc.yaml):
# strict, so a broken link or anchor, a page left out of the nav, an API object that moved
# or a figure whose metric is gone fails the build. Offline: nothing is fetched.
docs: install
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

test: install system-deps docs
	$(PYTEST) -q $(PYTEST_PARALLEL)

# everything but the tests marked slow (see pyproject.toml's markers)
test-quick: install docs
	$(PYTEST) -q $(PYTEST_PARALLEL) -m "not slow"

# The pre-fit model shipped in the package (BenchPress.from_pretrained()): the predictor of
# params.yaml's predict.sources/method fitted on the newest snapshot, with its calibrators and
# the 5-benchmark probe set of probes/probes.json. Run after `make main` (or `dvc repro`)
# and commit the folder;
# tests/test_artifact.py checks it still matches the registry built from the repository.
PRETRAINED := benchpress/pretrained/default
pretrained: install
	PATH=$(abspath $(VENV))/bin:$$PATH benchpress fit --snapshot latest \
	  --sources "$$($(PY) -c "import yaml; print(yaml.safe_load(open('params.yaml'))['predict']['sources'])")" \
	  --method "$$($(PY) -c "import yaml; print(yaml.safe_load(open('params.yaml'))['predict']['method'])")" \
	  --probes-from probes/probes.json --out $(PRETRAINED)

# what a run makes and git does not keep (metrics/ and plots/ are in git; snapshots/ is
# precious: every snapshot ever made, restored by `dvc pull`)
clean:
	rm -rf $(VENV) .cache registry fit probes drift report site

# The registry's life over the whole shared history date by date (sources/replay/history.yaml
# names the sources, whose configs list their versions: 51 LiveBench versions, 4 Artificial
# Analysis snapshots, 65 NYT Connections copies, the static sources at their dates), with a
# fit, probes and forecasts per date, in replay/history/ (never the project's registry; `make
# main` snapshots the same history month by month); a rerun reuses every snapshot and
# analysis. Prints the timeline; JSON in replay/history/timeline.json.
replay: install
	$(VENV)/bin/benchpress replay sources/replay/history.yaml --mirror $(or $(MIRROR),../shared/data)
