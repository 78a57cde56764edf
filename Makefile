# The book's two commands: `make book` and `make test`. Everything else is
# for authors and for GPU machines. Needs Python 3.11+ and make.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: book test test-quick test-newest test-gpu goals notebooks record sync install \
	cross browser screenshots clean help

help:
	@echo "make book       build the HTML book into _build/html"
	@echo "make test       run the whole test suite (CPU only)"
	@echo "make test-quick the unit tests not marked slow: a quick check"
	@echo "make test-newest  the suite again on Python 3.13 and the newest JAX"
	@echo "make notebooks  re-execute every chapter here and store outputs"
	@echo "make record     on a GPU: execute chapters, save reference results"
	@echo "make test-gpu   on a GPU: GPU tests; each chapter against its stored page"
	@echo "make goals      each chapter's goal, from its executed notebook"
	@echo "make sync       bring each chapter's twins together (last edit wins)"
	@echo "make screenshots  a PNG of every built page, in _build/screenshots"

# A virtual environment with the helpers package and the book's tools, at
# the versions last tested (constraints.txt; test-newest drops them).
CONSTRAINTS ?= -c constraints.txt
$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q $(INSTALL_UPGRADE) $(CONSTRAINTS) -e '.[dev]'
	touch $@

# XLA:GPU's compiler without a GPU (helpers.xla.crosscompile): JAX's CUDA
# plugin for the installed jaxlib, in a side folder so that the main
# environment never looks for a GPU. Optional: where no wheel exists (not
# x86-64 Linux) the chapters say so and skip the compilations. Checked on
# every run: a plugin left by another jaxlib is replaced.
cross: $(STAMP)
	@$(PY) scripts/cross_plugin.py $(VENV)/cross

install: $(STAMP) cross

# Chromium and its driver for the browser test of the built book
# (scripts/browse_book.py), from apt or dnf, when missing; needs root or
# sudo. make test does not run it: where there is no browser, the browser
# tests are skipped with the command that installs one (CI runs this first
# and sets BOOK_REQUIRE_BROWSER, so that there they fail instead).
browser:
	@scripts/browser_packages.sh

book: $(STAMP)
	$(VENV)/bin/jupyter-book build . --warningiserror --nitpick --keep-going
	@echo "The book is in _build/html: open _build/html/index.html"

# BOOK_DRY_RUN: the chapters also run their GPU code paths here (dry run).
# pytest-xdist runs the tests in TEST_JOBS processes (one per core), one
# file at a time each, so a notebook's cells run in order in one kernel.
TEST_JOBS ?= auto
test: $(STAMP) cross
	$(PY) -m ruff check .
	$(PY) -m mypy
	BOOK_DRY_RUN=1 $(PY) -m pytest tests chapters helpers --nbval-lax \
	  --doctest-modules -p no:cacheprovider -n $(TEST_JOBS) --dist loadfile

# For authors, between edits: lint, types and the unit tests not marked slow
# (child processes, compilations for the H100, statistics over many
# trials, the book build), in under two minutes on 2 cores. make test
# runs them all.
test-quick: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy
	$(PY) -m pytest tests/unit -m "not slow" -q -p no:cacheprovider

# The same suite on the newest Python and JAX the registries give (Colab's
# and the GPU host's end). Debian 12 has no Python 3.12+, so
# scripts/newest_python.sh builds CPython 3.13 once into ~/.cache.
NEWEST_VENV ?= .venv-newest
test-newest:
	@py=$$(scripts/newest_python.sh) && \
	$(MAKE) --no-print-directory test VENV=$(NEWEST_VENV) PYTHON=$$py \
	  INSTALL_UPGRADE=--upgrade CONSTRAINTS=

sync: $(STAMP)
	$(PY) scripts/notebooks.py sync

notebooks: $(STAMP) cross
	$(PY) scripts/notebooks.py execute

# On a CUDA machine: execute every chapter live, storing the outputs and
# saving each chapter's reference results under recorded/<device>/.
record: $(STAMP) cross
	BOOK_RECORD=1 $(PY) scripts/notebooks.py execute

# On a GPU: the GPU tests, and each chapter executed again and compared
# with the page this GPU stored (tests/gpu/test_pages_reproduce.py:
# measured numbers within their tolerance, the rest exactly). The JUnit
# file is kept in recorded/ for the Reproducibility page.
test-gpu: $(STAMP)
	$(PY) -m pytest tests/gpu -p no:cacheprovider \
	  --junitxml=recorded/test-gpu-junit.xml

goals: $(STAMP)
	$(PY) -m helpers.workbook.ch09_reproducibility.goals chapters

# For authors: look at every page as a reader sees it (scripts/browse_book.py).
screenshots: book
	$(PY) scripts/browse_book.py screenshots _build/html _build/screenshots

clean:
	rm -rf _build
