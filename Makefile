# flamefuse: two set-up commands on a fresh machine, `make demo` and `make test`.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
TSTAMP  := $(VENV)/.installed-test

.PHONY: demo test bench clean tex-tools

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e .
	touch $@

$(TSTAMP): $(STAMP)
	$(BIN)/python -m pip install -q -e '.[test,bench,dask]'
	touch $@

demo: $(STAMP)
	$(BIN)/flamefuse derive specs/spd_inverse.yaml
	$(BIN)/python -m flamefuse.codegen.demo

test: $(TSTAMP)
	$(BIN)/python -m pytest

# Optional, explicit: the system packages (pdflatex, pdftoppm) with which the
# LaTeX test also compiles and renders the document; without them that test is
# skipped with its reason and the LaTeX source is still checked.  Needs root
# and Debian's apt-get; `make test` never installs system packages.
tex-tools:
	@command -v pdflatex >/dev/null 2>&1 && echo "pdflatex is installed" || { \
	  command -v apt-get >/dev/null 2>&1 || { echo "tex-tools: no apt-get here; install TeX Live (pdflatex) and poppler (pdftoppm) by hand"; exit 2; }; \
	  [ "$$(id -u)" = 0 ] || { echo "tex-tools: run as root (apt-get install texlive-latex-base poppler-utils)"; exit 2; }; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	    texlive-latex-base poppler-utils; }

bench: $(TSTAMP)
	$(BIN)/flamefuse bench all

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
