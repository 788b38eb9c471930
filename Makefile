# memstream: `make demo` runs the main job on offline defaults, `make test` runs the tests,
# `make test-fast` the quick loop (no slow, browser, real-data or notebook tests).
# Each creates or refreshes the virtual environment at .venv from the repo's own files.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The tests spread over the machine's cores (at most 4), a file to a worker: `make test PARALLEL=` runs them in one.
PARALLEL ?= -n auto --maxprocesses 4 --dist loadfile

.PHONY: demo test test-fast lint typecheck docs docs-strict bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The main job: the default town's 25 agents for three simulated hours, offline.
demo: $(STAMP)
	rm -rf runs/demo
	$(BIN)/memstream run --hours 3 --out runs/demo

# The lint and the type check first, then the docs' strict build, then every test.
test: lint docs-strict
	$(BIN)/python -m pytest -q $(PARALLEL)

# The docs site (mkdocs-material) into site/: open site/index.html. Executes every notebook (04 and 06
# where ../shared/data or MEMSTREAM_DATA has LoCoMo).
docs: $(STAMP)
	MEMSTREAM_DOCS_EXECUTE=all $(BIN)/mkdocs build

# A broken link, a missing page or anchor, an unresolved API reference, a failing notebook or a malformed
# results file fails it (offline). Executes only the quick notebooks (scripts/mkdocs_hooks.py: QUICK).
docs-strict: $(STAMP)
	NO_MKDOCS_2_WARNING=1 MEMSTREAM_DOCS_EXECUTE=quick $(BIN)/mkdocs build --strict --quiet

# The loop while working: under a minute on 2 cores; `make test` before a commit runs everything.
test-fast: $(STAMP)
	$(BIN)/ruff check memstream tests benchmarks notebooks
	$(BIN)/python -m pytest -q $(PARALLEL) -m "not slow and not browser and not real_data and not notebook"

lint: typecheck
	$(BIN)/ruff check memstream tests benchmarks notebooks

# mypy on the package, as [tool.mypy] in pyproject.toml configures it.
typecheck: $(STAMP)
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python benchmarks/retrieval.py --n 1000,10000,100000
	$(BIN)/python benchmarks/simulation.py --agents 25,200,1000 --hours 1

clean:
	rm -rf $(VENV) build site *.egg-info .pytest_cache .ruff_cache .mypy_cache
