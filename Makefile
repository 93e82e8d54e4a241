# The course's commands. `make book` and `make test` each set everything up first (a virtual environment
# in .venv with the pinned toolchain), so each works on a fresh machine with Python 3.11 (3.10+).
#
#   make book        set up, then build the HTML book into _build/html (warnings are errors)
#   make test        set up, then run the whole test suite (book build, nbgrader round-trips, package tests)
#   make exercises   regenerate exercises/ from solutions/ with nbgrader (after editing a solution notebook)
#   make hints       regenerate the edit hints (seqcourse/hint_data/) after changing a solution or a visible test
#
# TORCH_SPEC picks the PyTorch to install when the environment has none. The default pins a known-good
# release; on Linux without a GPU, `make book TORCH_PIP_ARGS="--index-url https://download.pytorch.org/whl/cpu"`
# avoids the multi-GB CUDA build.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
BIN := $(VENV)/bin
TORCH_SPEC ?= torch==2.13.0
TORCH_PIP_ARGS ?=
export SEQCOURSE_PROGRESS ?= 0
export PIP_DISABLE_PIP_VERSION_CHECK = 1

.PHONY: set-url setup book test exercises hints clean

setup: $(VENV)/.installed

$(VENV)/.installed: requirements.txt tests/requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -c "import torch" 2>/dev/null || $(BIN)/python -m pip install "$(TORCH_SPEC)" $(TORCH_PIP_ARGS)
	$(BIN)/python -m pip install -r requirements.txt -r tests/requirements.txt
	$(BIN)/python -m pip install --no-deps -e .
	touch $@

book: setup
	$(BIN)/jupyter-book build . -W --keep-going
	@echo "The book is in _build/html/index.html"

test: setup
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest

exercises: setup
	cd autograder && for a in ../solutions/*/; do \
	  PATH="$(CURDIR)/$(BIN):$$PATH" ../$(BIN)/python -m nbgrader generate_assignment "$$(basename $$a)" --force || exit 1; \
	done

hints: setup
	for a in solutions/*/; do \
	  PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m autograder.edit_hints "$$(basename $$a)" || exit 1; \
	done

# Publishing: point the book's repository link and the exercises' Colab install line at the real repository,
# e.g. make set-url URL=https://github.com/ORG/REPO (then commit solutions/, exercises/ and _config.yml).
CURRENT_URL = $(shell sed -n 's/^  url: //p' _config.yml)
set-url:
	@test -n "$(URL)" || { echo "usage: make set-url URL=https://github.com/ORG/REPO" >&2; exit 2; }
	@echo "$(URL)" | grep -Eq '^https://[A-Za-z0-9._/-]+$$' || { echo "error: URL must be https://host/owner/repo" >&2; exit 2; }
	grep -rlF "$(CURRENT_URL)" _config.yml solutions | xargs sed -i "s#$(CURRENT_URL)#$(URL)#g"
	$(MAKE) exercises

clean:
	rm -rf _build .cache .pytest_cache
