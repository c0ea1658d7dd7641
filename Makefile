# The two set-up commands of the README: `make test` and `make demo`.
# Everything is installed into .venv from this project's own files.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
CROSSHAIR_SECONDS ?= 2
PROOF_SECONDS ?= 20
# The demo: a robot fleet of about a million messages, the ApproximateTime job on local Spark.
DEMO_DIR ?= demo-data
DEMO_MESSAGES ?= 1000000
DEMO_ROBOTS ?= 20
DEMO_CONFIG ?= {"topics": ["camera", "lidar", "imu"], "queue_size": 30, "max_interval_duration": 40000000}

# The ROS bag demo: a small fleet of rosbag2 (MCAP, SQLite 3) and ROS 1 bags.
DEMO_BAG_ROBOTS ?= 6
DEMO_BAG_SECONDS ?= 20
DEMO_BAG_CONFIG ?= {"topics": ["/camera/camera_info", "/imu"], "queue_size": 10, "max_interval_duration": 20000000}

.PHONY: install test lint typecheck unit crosshair proofs demo demo-bags bench vectors clean

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

demo: $(STAMP)
	$(BIN)/timealign generate --output $(DEMO_DIR)/fleet --robots $(DEMO_ROBOTS) --messages $(DEMO_MESSAGES)
	$(BIN)/timealign run approximate_time --input $(DEMO_DIR)/fleet --output $(DEMO_DIR)/out \
		--config '$(DEMO_CONFIG)' --summary $(DEMO_DIR)/summary.json
	$(BIN)/python -m timealign.spark.verify approximate_time --input $(DEMO_DIR)/fleet \
		--output $(DEMO_DIR)/out --config '$(DEMO_CONFIG)'

demo-bags: $(STAMP)
	$(BIN)/python -m timealign.rosbag.demo --output $(DEMO_DIR)/bags --robots $(DEMO_BAG_ROBOTS) \
		--seconds $(DEMO_BAG_SECONDS)
	$(BIN)/timealign run approximate_time --format rosbag --input $(DEMO_DIR)/bags \
		--output $(DEMO_DIR)/bags-out --config '$(DEMO_BAG_CONFIG)' \
		--summary $(DEMO_DIR)/bags-summary.json

bench: $(STAMP)
	for script in benchmarks/bench_*.py; do $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info reference/*.egg-info .mypy_cache .ruff_cache .hypothesis
