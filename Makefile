# `make book`: set up .venv and build the HTML book into _build/html.
# `make test`: hwlib's tests, every chapter executed by nbval, and a strict clean build.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: book test strict-book clean

$(STAMP): requirements.txt pyproject.toml
	python3 -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $(STAMP)

book: $(STAMP)
	$(BIN)/jupyter-book build . --builder html

test: $(STAMP)
	$(BIN)/python -m pytest --nbval
	$(MAKE) strict-book

strict-book: $(STAMP)
	rm -rf _build
	$(BIN)/jupyter-book build . --builder html --all -W -n --keep-going

clean:
	rm -rf _build
