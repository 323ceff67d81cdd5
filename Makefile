# `make book`:     set up .venv from requirements.lock and build the HTML book into _build/html.
# `make test`:     ruff, hwlib's tests and every chapter (pytest --nbval, in parallel), the PDF built and checked,
#                  a strict build with warnings as errors, and every built page checked in headless Chromium.
#                  It installs nothing outside .venv: without TeX or Chromium their steps say so and are skipped
#                  (under CI=true they fail; .ci/run installs both).
# `make pdf`:      the book as one PDF, _build/latex/book.pdf (`make pdf-deps` installs the TeX it needs).
# `make lock`:     requirements.lock again from requirements.txt (after editing requirements.txt).
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
WEB := web/static/vendor/.copied

.PHONY: book test strict-book pdf pdf-deps lock lab clean

$(STAMP): requirements.lock pyproject.toml
	python3 -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.lock
	touch $(STAMP)

# Exact versions of everything requirements.txt asks for, for every platform and Python 3.10+ (uv's universal
# resolution); versions already in the lock are kept where they still satisfy requirements.txt.
# `make lock LOCK_FLAGS=--upgrade` takes the newest releases instead.
lock: $(STAMP)
	$(BIN)/uv pip compile requirements.txt --universal --python-version 3.10 --quiet $(LOCK_FLAGS) \
	  --custom-compile-command "make lock" -o requirements.lock

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

STRICT_BUILD := $(BIN)/jupyter-book build . --builder html --all -W -n --keep-going
TIMES := _build/make-test-times.tsv
TIMED := tools/timed $(TIMES)
STEP := $(MAKE) --no-print-directory

# Each chapter is executed once, by pytest (conftest.py hands every chapter that passed to the execution
# cache); the PDF and the strict HTML build read the cache, and the strict build fails if it ran a chapter
# again. The PDF comes first so that one HTML build offers it. Each step's wall time goes to $(TIMES).
test: $(STAMP) $(WEB)
	rm -rf _build && mkdir -p _build
	$(TIMED) "ruff format --check, ruff check" $(STEP) lint
	$(TIMED) "pytest --nbval: tests and every chapter" $(BIN)/python -m pytest --nbval -n auto --dist loadfile
	touch $(HWLIB_STAMP)  # the execution cache pytest filled is this hwlib's
	$(TIMED) "PDF from the cache, and its check" $(STEP) test-pdf
	$(TIMED) "strict HTML build from the cache" $(STEP) test-html
	$(TIMED) "every page in Chromium" $(STEP) test-pages
	@echo "make test passed; seconds per step:" && awk -F '\t' '{ printf "  %-42s %6.1f\n", $$1, $$2 }' $(TIMES)

.PHONY: lint test-pdf test-html test-pages
lint:
	@$(BIN)/ruff format --check --quiet . || { echo "ruff format: run .venv/bin/ruff format . for the files above"; exit 1; }
	$(BIN)/ruff check --quiet .

test-pdf:
	@if $(STEP) -s has-tex 2>/dev/null; then $(STEP) pdf; \
	elif [ "$$CI" = true ]; then echo "CI=true: the PDF must be built, and TeX is missing (make pdf-deps)"; exit 1; \
	else echo "PDF skipped: TeX is not installed (make pdf-deps installs it)"; fi

test-html:
	$(STRICT_BUILD) 2>&1 | tee _build/strict-build.log
	@! grep "Executing notebook" _build/strict-build.log || { echo "the build executed the chapters above again:" \
	  "the execution cache entries pytest wrote did not match (see conftest.py)"; exit 1; }

test-pages:
	@if command -v chromium >/dev/null || [ "$$CI" = true ]; then $(BIN)/python -m pytest browser_tests; \
	else echo "browser checks skipped: Chromium is not installed (apt-get install chromium)"; fi

# A clean build in which the build itself executes every chapter, warnings as errors.
strict-book: $(STAMP) $(WEB)
	rm -rf _build
	$(STRICT_BUILD)
	touch $(HWLIB_STAMP)

# The PDF edition: Jupyter Book's LaTeX builder (xelatex, settings in _config.yml's `latex:`) from the
# execution cache, then tools/check_pdf.py (page count, bookmarks, no Python repr, no missing glyph).
# The next HTML build copies the PDF into _build/html and links it from every page's download menu.
PDF_PACKAGES := texlive-latex-recommended texlive-latex-extra texlive-fonts-recommended texlive-xetex latexmk \
	fonts-freefont-otf fonts-wqy-microhei xindy poppler-utils
.PHONY: has-tex
has-tex:
	@missing="$$(for p in $(PDF_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done)"; \
	[ -z "$$missing" ] || { echo "missing Debian packages:" $$missing >&2; exit 1; }

pdf-deps:
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(PDF_PACKAGES) >/dev/null

pdf: $(STAMP) $(HWLIB_STAMP)
	@$(MAKE) --no-print-directory -s has-tex || { echo "make pdf needs TeX: make pdf-deps (as root) installs it"; exit 1; }
	$(BIN)/jupyter-book build . --builder pdflatex </dev/null
	$(BIN)/python tools/check_pdf.py _build/latex/book.pdf

# The chapters as notebooks in JupyterLab, with a live kernel for the explorers and the numbers in the prose
# rendered: tools/lab_copies.py writes a copy of each chapter (_build/lab/book/*.ipynb) whose glue roles are
# {eval} expressions that jupyterlab-myst evaluates in the kernel (filled in from the last build where its code
# is the same). The sources stay as they are. Settings overrides inside .venv, nothing outside it: jupytext's
# notebook viewer for MyST Markdown files, no news pop-up.
LAB_OVERRIDES := $(VENV)/share/jupyter/lab/settings/overrides.json
# Where JupyterLab listens, and whether it opens a browser: make lab LAB_HOST=0.0.0.0 LAB_PORT=8890 LAB_NO_BROWSER=1
LAB_HOST ?= localhost
LAB_PORT ?= 8888
LAB_NO_BROWSER ?=
LAB_AS_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)
lab: $(STAMP)
	mkdir -p $(dir $(LAB_OVERRIDES))
	echo '{"@jupyterlab/docmanager-extension:plugin": {"defaultViewers": {"markdown": "Jupytext Notebook", "myst": "Jupytext Notebook"}}, "@jupyterlab/apputils-extension:notification": {"fetchNews": "false"}}' > $(LAB_OVERRIDES)
	$(BIN)/python tools/lab_copies.py --out _build/lab
	$(BIN)/jupyter lab $(LAB_AS_ROOT) --notebook-dir=_build/lab --ServerApp.ip=$(LAB_HOST) --ServerApp.port=$(LAB_PORT) \
		$(if $(filter 1 yes true,$(LAB_NO_BROWSER)),--no-browser) _build/lab/book/intro.ipynb

clean:
	rm -rf _build
