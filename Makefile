# Two entry points for a fresh machine (Python >= 3.11 and git are all it needs):
#   make main   - install, then run the whole pipeline (dvc repro) offline on the default data
#   make test   - install, then run the test suite
# Data come from the mirror folder in params.yaml, ../shared/data (see README: "Offline use").

VENV ?= .venv
PY := $(VENV)/bin/python
# empty: the pipeline reads params.yaml's data.mirror; `make main MIRROR=DIR` overrides it
MIRROR ?=

.PHONY: install system-deps main test clean

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $@

install: $(VENV)/.installed

main: install
	$(if $(MIRROR),BENCHPRESS_MIRROR=$(MIRROR)) PATH=$(abspath $(VENV))/bin:$$PATH $(VENV)/bin/dvc repro
	PATH=$(abspath $(VENV))/bin:$$PATH $(VENV)/bin/benchpress summary

# the report test opens the HTML page in headless Chromium (Debian's package)
system-deps:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; } \
	  || { echo "install Debian's chromium package (apt-get install chromium) to run the report test"; exit 1; }

test: install system-deps
	$(PY) -m pytest -q

clean:
	rm -rf $(VENV) .cache registry metrics plots fit
