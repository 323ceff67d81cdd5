# `make book`: set up .venv and build the HTML book into _build/html.
# `make test`: hwlib's tests, every chapter executed by nbval, a strict clean build, the PDF
#              built and checked, and every built page checked in headless Chromium.
# `make pdf`:  the book as one PDF, _build/latex/book.pdf (installs the TeX packages it needs).
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
WEB := web/static/vendor/.copied

.PHONY: book test strict-book pdf pdf-packages lab clean

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
	$(MAKE) pdf
	$(BIN)/jupyter-book build . --builder html  # the pages again, offering the PDF (nothing is executed again)
	$(BIN)/python -m pytest browser_tests

strict-book: $(STAMP) $(WEB)
	rm -rf _build
	$(BIN)/jupyter-book build . --builder html --all -W -n --keep-going
	touch $(HWLIB_STAMP)  # the execution cache it filled is this hwlib's

# The PDF edition: Jupyter Book's LaTeX builder (xelatex, settings in _config.yml's `latex:`) from the
# execution cache, then tools/check_pdf.py (page count, bookmarks, no Python repr, no missing glyph).
# The next HTML build copies the PDF into _build/html and links it from every page's download menu.
PDF_PACKAGES := texlive-latex-recommended texlive-latex-extra texlive-fonts-recommended texlive-xetex latexmk \
	fonts-freefont-otf fonts-wqy-microhei xindy poppler-utils
pdf-packages:
	@missing="$$(for p in $(PDF_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done)"; \
	if [ -n "$$missing" ]; then \
	  echo "installing" $$missing; \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; } \
	  || { echo "make pdf needs these Debian packages (install them as root): $$missing"; exit 1; }; \
	fi

pdf: $(STAMP) $(HWLIB_STAMP) pdf-packages
	$(BIN)/jupyter-book build . --builder pdflatex </dev/null
	$(BIN)/python tools/check_pdf.py _build/latex/book.pdf

# The chapters as notebooks in JupyterLab, with a live kernel for the explorers and the numbers in the prose
# rendered: tools/lab_copies.py writes a copy of each chapter (_build/lab/book/*.ipynb) whose glue roles are
# {eval} expressions that jupyterlab-myst evaluates in the kernel (filled in from the last build where its code
# is the same). The sources stay as they are. Settings overrides inside .venv, nothing outside it: jupytext's
# notebook viewer for MyST Markdown files, no news pop-up.
LAB_OVERRIDES := $(VENV)/share/jupyter/lab/settings/overrides.json
LAB_AS_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)
lab: $(STAMP)
	mkdir -p $(dir $(LAB_OVERRIDES))
	echo '{"@jupyterlab/docmanager-extension:plugin": {"defaultViewers": {"markdown": "Jupytext Notebook", "myst": "Jupytext Notebook"}}, "@jupyterlab/apputils-extension:notification": {"fetchNews": "false"}}' > $(LAB_OVERRIDES)
	$(BIN)/python tools/lab_copies.py --out _build/lab
	$(BIN)/jupyter lab $(LAB_AS_ROOT) --notebook-dir=_build/lab _build/lab/book/intro.ipynb

clean:
	rm -rf _build
