# One command sets up and runs: `make demo` (draw a sample) and `make test` (the suite).
# Each creates its own virtual environment in .venv; nothing to install by hand.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
BIN    := $(VENV)/bin

.PHONY: demo test lint format bench samples clean install

# pip's own chatter (and setuptools' banners) go to a log, shown only if the install fails.
$(VENV)/.installed: pyproject.toml
	@echo "setting up $(VENV) (once; pip's log in $(VENV)/install.log)"
	@$(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install --upgrade pip > $(VENV)/install.log 2>&1 || { cat $(VENV)/install.log; exit 1; }
	@$(PY) -m pip install -e '.[dev]' >> $(VENV)/install.log 2>&1 || { cat $(VENV)/install.log; exit 1; }
	@touch $@

install: $(VENV)/.installed

# The main job: the hand-derived example, drawn in the terminal with data and grads.
demo: install
	$(BIN)/gradviz draw "e = a*b; d = e + c; L = d*f" a=2 b=-3 c=10 f=-2

# The Mermaid parser (mermaid.js under Node with jsdom) that the tests check output against.
tests/mermaid/node_modules/.installed: tests/mermaid/package.json tests/mermaid/package-lock.json
	cd tests/mermaid && npm ci --no-audit --no-fund --loglevel=error
	touch $@

test: install tests/mermaid/node_modules/.installed
	$(PY) -m pytest -q

lint: install
	$(BIN)/ruff check gradviz tests bench
	$(BIN)/ruff format --check gradviz tests bench

format: install
	$(BIN)/ruff format gradviz tests bench
	$(BIN)/ruff check --fix gradviz tests bench

$(VENV)/.bench-installed: $(VENV)/.installed
	@$(PY) -m pip install -e '.[bench]' >> $(VENV)/install.log 2>&1 || { cat $(VENV)/install.log; exit 1; }
	@touch $@

bench: $(VENV)/.bench-installed
	$(PY) bench/run.py

# Regenerate the diagrams of samples/*.expr under docs/ (SVG and Mermaid), the live pages of
# the hand example and their screenshots (those need Chromium; skipped without it).
samples: install
	$(PY) -m gradviz.tools.samples
	$(PY) -m gradviz.tools.screenshots

clean:
	rm -rf $(VENV) tests/mermaid/node_modules .pytest_cache
