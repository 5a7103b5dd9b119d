# flamefuse: two set-up commands on a fresh machine, `make demo` and `make test`.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
TSTAMP  := $(VENV)/.installed-test

.PHONY: demo test bench clean tex

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
	$(BIN)/python -m flamefuse.codegen.demo

test: $(TSTAMP) tex
	$(BIN)/python -m pytest

# Best effort: pdflatex lets the LaTeX test compile and render the document;
# without it (no root, no registry) that test checks the source structurally.
tex:
	@command -v pdflatex >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && \
	  timeout 600 sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	  --no-install-recommends texlive-latex-base poppler-utils' >/dev/null 2>&1 || \
	  echo "note: pdflatex not installed; the LaTeX test checks the source only"; }

bench: $(TSTAMP)
	$(BIN)/flamefuse bench all

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
