# One command sets up and runs: `make demo` (draw a sample), `make test` (the fast suite) and
# `make test-all` (every test, as CI runs them). They share one virtual environment in .venv:
# the demo installs gradviz alone, the tests add their tools; nothing to install by hand.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
BIN    := $(VENV)/bin

.PHONY: demo test test-all test-torch torch frameworks lint format bench samples clean install docs docs-ready docs-serve

# Without Python >= 3.11, one line says so (instead of a page of pip's log).
PYTHON_FOUND = $(shell command -v $(PYTHON) 2>/dev/null)
PYTHON_OK = $(if $(PYTHON_FOUND),$(shell $(PYTHON) -c 'import sys; print(sys.version_info >= (3, 11))' 2>/dev/null))
PYTHON_IS = $(if $(PYTHON_FOUND),$(PYTHON) is $(shell $(PYTHON) --version 2>&1),there is no $(PYTHON))

# pip's own chatter (and setuptools' banners) go to a log, shown only if the install fails.
$(VENV)/.installed: pyproject.toml
	$(if $(filter True,$(PYTHON_OK)),,$(error gradviz needs Python >= 3.11 and $(PYTHON_IS): install it, or name one with make PYTHON=python3.11))
	@echo "setting up $(VENV) (once; pip's log in $(VENV)/install.log)"
	@$(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install --upgrade pip > $(VENV)/install.log 2>&1 || { cat $(VENV)/install.log; exit 1; }
	@$(PY) -m pip install -e . >> $(VENV)/install.log 2>&1 || { cat $(VENV)/install.log; exit 1; }
	@touch $@

# The test tools (pytest with xdist, hypothesis, ruff, selenium) only for the targets that use them, not for the demo.
$(VENV)/.dev-installed: $(VENV)/.installed
	@echo "adding the test tools to $(VENV) (pytest, xdist, hypothesis, ruff, selenium)"
	@$(PY) -m pip install -e '.[dev]' >> $(VENV)/install.log 2>&1 || { cat $(VENV)/install.log; exit 1; }
	@touch $@

install: $(VENV)/.dev-installed

# The docs tools (the `docs` extra: mkdocs, mkdocs-material, pymdown-extensions, sphinx,
# myst-parser), for `make docs` and for the tests that build docs sites (`make test-all`).
$(VENV)/.docs-installed: $(VENV)/.dev-installed
	@echo "adding the docs tools to $(VENV) (mkdocs, mkdocs-material, pymdown-extensions, sphinx, myst-parser)"
	@$(PY) -m pip install -e '.[docs]' >> $(VENV)/install.log 2>&1 || { cat $(VENV)/install.log; exit 1; }
	@touch $@

# The main job: the hand-derived example, drawn in the terminal with data and grads.
# It ends with the next step: gradviz lives in .venv, not on PATH.
demo: $(VENV)/.installed
	$(BIN)/gradviz draw "e = a*b; d = e + c; L = d*f" a=2 b=-3 c=10 f=-2
	@echo
	@echo "next: gradviz is in $(VENV), not on PATH: run $(BIN)/gradviz --help, or \`source $(BIN)/activate\` and then gradviz --help"

# The Mermaid parser (mermaid.js under Node with jsdom) that the tests check output against.
# Without npm, one line says what to install (instead of `npm: not found`, Error 127).
NPM = $(shell command -v npm 2>/dev/null)
tests/mermaid/node_modules/.installed: tests/mermaid/package.json tests/mermaid/package-lock.json
	$(if $(NPM),,$(error the tests need Node.js and npm (for the Mermaid parser): install them, e.g. `apt-get install nodejs npm`, then run make again))
	cd tests/mermaid && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# The fast suite, for every change; `make test-all` adds the tests marked slow (the ones that
# train networks to the end), as CI (.ci/run) does. Each test file runs on one worker
# (--dist loadfile), so a file's module fixtures (a trained model, a page, mermaid.js's
# reading of a file's texts) are made once, not once per worker.
PYTEST := $(PY) -m pytest -q -n auto --dist loadfile

test: install tests/mermaid/node_modules/.installed
	$(PYTEST) -m "not slow"

test-all: install $(VENV)/.docs-installed tests/mermaid/node_modules/.installed
	$(PYTEST)

# PyTorch for gradviz.torch's tests, pinned (a CPU build, about 100 s and 900 MB; an
# unpinned torch may pull a CUDA build of several GB). Without it those tests skip locally;
# under CI (.ci/run installs it) they must run.
TORCH_PIN ?= torch==2.13.0
$(VENV)/.torch-installed: $(VENV)/.dev-installed
	@echo "adding $(TORCH_PIN) to $(VENV) (once; a CPU build)"
	@$(PY) -m pip install '$(TORCH_PIN)' >> $(VENV)/install.log 2>&1 || { cat $(VENV)/install.log; exit 1; }
	@touch $@

torch: $(VENV)/.torch-installed

# The training frameworks gradviz.torch's callbacks plug into (Lightning, the Hugging Face
# Trainer with accelerate, TensorBoard), pinned to versions that install beside
# $(TORCH_PIN) without pulling another torch (pip install --dry-run with both said so); the
# torch pin is in the same command, so pip keeps it. Without them their tests skip
# locally; under CI (.ci/run installs them) they must run.
FRAMEWORK_PINS ?= lightning==2.6.6 transformers==5.24.0 accelerate==1.16.0 tensorboard==2.21.0
$(VENV)/.frameworks-installed: $(VENV)/.torch-installed
	@echo "adding $(FRAMEWORK_PINS) to $(VENV) (once)"
	@$(PY) -m pip install '$(TORCH_PIN)' $(FRAMEWORK_PINS) >> $(VENV)/install.log 2>&1 || { cat $(VENV)/install.log; exit 1; }
	@touch $@

frameworks: $(VENV)/.frameworks-installed

# gradviz.torch's tests alone (the parity and DDP tests among them), with torch installed.
test-torch: $(VENV)/.frameworks-installed
	$(PYTEST) tests/test_torch_*.py

lint: install
	$(BIN)/ruff check gradviz tests bench tools
	$(BIN)/ruff format --check gradviz tests bench tools

format: install
	$(BIN)/ruff format gradviz tests bench tools
	$(BIN)/ruff check --fix gradviz tests bench tools

$(VENV)/.bench-installed: $(VENV)/.installed
	@$(PY) -m pip install -e '.[bench]' >> $(VENV)/install.log 2>&1 || { cat $(VENV)/install.log; exit 1; }
	@touch $@

bench: $(VENV)/.bench-installed
	$(PY) bench/run.py

# Regenerate the diagrams of samples/*.expr under docs/ (SVG and Mermaid), the live pages of
# the hand example and their screenshots (those need Chromium; skipped without it). A
# screenshot is taken again only when its page changed (docs/screenshots.json records what
# each was taken of): Chromium's bytes differ between machines, the pages' do not.
samples: install
	$(PY) -m tools.samples
	$(PY) -m tools.screenshots

# Our docs site (mkdocs.yml: docs/ into site/), built with --strict: every diagram in it is
# drawn by the gradviz fence, whose commands run in build/docs (a link to samples/ and the
# model they read, trained here); Mermaid is the copy the tests install (no CDN).
DOCS_RUN := build/docs
$(DOCS_RUN)/xor.json: samples/xor.toml $(VENV)/.installed
	@mkdir -p $(DOCS_RUN)
	$(BIN)/gradviz train samples/xor.toml -q --save $@

docs/assets/mermaid.min.js: tests/mermaid/node_modules/.installed
	cp tests/mermaid/node_modules/mermaid/dist/mermaid.min.js $@

docs-ready: $(VENV)/.docs-installed $(DOCS_RUN)/xor.json docs/assets/mermaid.min.js
	@ln -sfn ../../samples $(DOCS_RUN)/samples

docs: docs-ready
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# What a docs writer runs: the site served (rebuilt on every change), build/docs ready first.
docs-serve: docs-ready
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

clean:
	rm -rf $(VENV) tests/mermaid/node_modules .pytest_cache site build/docs
