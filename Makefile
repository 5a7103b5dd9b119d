# flamefuse: two set-up commands on a fresh machine, `make demo` and `make test`.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
TSTAMP  := $(VENV)/.installed-test

.PHONY: demo test bench clean generated

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e .
	touch $@

$(TSTAMP): $(STAMP)
	$(BIN)/python -m pip install -q -e '.[test,bench]'
	touch $@

demo: $(STAMP)
	$(BIN)/flamefuse derive specs/spd_inverse.yaml

test: $(TSTAMP)
	$(BIN)/python -m pytest

bench: $(TSTAMP)
	$(BIN)/flamefuse bench all

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
