# The two set-up commands of the README: `make test` and `make demo`.
# Everything is installed into .venv from this project's own files.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
CROSSHAIR_SECONDS ?= 2
PROOF_SECONDS ?= 20

.PHONY: install test lint typecheck unit crosshair proofs demo bench vectors clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,spark]'
	touch $(STAMP)

install: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest -q

crosshair: $(STAMP)
	$(BIN)/python proofs/crosshair_pass.py --seconds $(CROSSHAIR_SECONDS)

test: lint typecheck unit crosshair

proofs: $(STAMP)
	$(BIN)/python proofs/crosshair_pass.py --seconds $(PROOF_SECONDS) --report-all
	$(BIN)/python -m proofs.explore
	$(BIN)/python -m proofs.explore_rate_aware_batcher  # liveness probes (spec RB, bounded exploration)

vectors: $(STAMP)
	$(BIN)/python -m vectors.generate

bench: $(STAMP)
	for script in benchmarks/bench_*.py; do $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info reference/*.egg-info .mypy_cache .ruff_cache .hypothesis
