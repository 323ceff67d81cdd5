# `make book`: set up .venv and build the HTML book into _build/html.
# `make test`: hwlib's tests, every chapter executed by nbval, a strict clean build, and
#              every built page checked in headless Chromium.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
WEB := web/static/vendor/.copied

.PHONY: book test strict-book lab clean

$(STAMP): requirements.txt pyproject.toml
	python3 -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $(STAMP)

# Math and widget scripts come from the npm registry and are served by the book itself.
$(WEB): web/package.json web/package-lock.json
	@command -v npm >/dev/null || { echo "npm is needed for the book's offline assets: apt-get install npm"; exit 1; }
	npm ci --prefix web --no-audit --no-fund --ignore-scripts --loglevel=error
	rm -rf web/static/vendor && mkdir -p web/static/vendor/requirejs
	cp -r web/node_modules/mathjax/es5 web/static/vendor/mathjax
	mkdir -p web/static/vendor/@jupyter-widgets/html-manager
	cp -r web/node_modules/@jupyter-widgets/html-manager/dist web/static/vendor/@jupyter-widgets/html-manager/
	rm -f web/static/vendor/@jupyter-widgets/html-manager/dist/*.map
	cp web/node_modules/requirejs/require.js web/static/vendor/requirejs/
	touch $(WEB)

# The execution cache is keyed on cell code only: drop it whenever hwlib changes.
HWLIB_STAMP := _build/.hwlib-stamp
$(HWLIB_STAMP): $(shell find hwlib -name '*.py')
	rm -rf _build/.jupyter_cache
	mkdir -p _build && touch $(HWLIB_STAMP)

book: $(STAMP) $(WEB) $(HWLIB_STAMP)
	$(BIN)/jupyter-book build . --builder html

test: $(STAMP)
	$(BIN)/python -m pytest --nbval
	$(MAKE) strict-book
	$(BIN)/python -m pytest browser_tests

strict-book: $(STAMP) $(WEB)
	rm -rf _build
	$(BIN)/jupyter-book build . --builder html --all -W -n --keep-going

# The chapters as notebooks in JupyterLab, with a live kernel for the explorers: jupytext's notebook viewer is
# made the default for MyST Markdown files (a settings override inside .venv, nothing outside it).
LAB_OVERRIDES := $(VENV)/share/jupyter/lab/settings/overrides.json
lab: $(STAMP)
	mkdir -p $(dir $(LAB_OVERRIDES))
	echo '{"@jupyterlab/docmanager-extension:plugin": {"defaultViewers": {"markdown": "Jupytext Notebook", "myst": "Jupytext Notebook"}}}' > $(LAB_OVERRIDES)
	$(BIN)/jupyter lab --notebook-dir=. book/intro.md

clean:
	rm -rf _build
