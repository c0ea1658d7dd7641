# The two set-up commands of the README: `make test` and `make demo`.
# Everything is installed into .venv from this project's own files.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
# What `make conform-ros1` needs: timealign and Hypothesis (`.[conform]`), not the spark and
# plot extras. The full install (STAMP) holds it, so after `make test` nothing is installed.
CONFORM_STAMP := $(VENV)/.conform-stamp
# What `make docs` needs besides the full install: the `docs` extra (mkdocs and its plugins).
DOCS_STAMP := $(VENV)/.docs-stamp
INSTALL_SOURCES := pyproject.toml setup.py $(wildcard reference/timealign/*/fast.py)
# apt-get waits up to 5 minutes for a lock another apt or dpkg holds, instead of failing.
APT_GET := apt-get -o DPkg::Lock::Timeout=300
CROSSHAIR_SECONDS ?= 2
PROOF_SECONDS ?= 20
# The demo: a robot fleet of about a million messages, the ApproximateTime job on local Spark.
DEMO_DIR ?= demo-data
DEMO_MESSAGES ?= 1000000
DEMO_ROBOTS ?= 20
DEMO_CONFIG ?= {"topics": ["camera", "lidar", "imu"], "queue_size": 30, "max_interval_duration": 40000000}

# The checks of the pure-Python fast paths against the vectors and the rule text (lockstep,
# stateful, differential), run with TIMEALIGN_PURE=1 whatever build is installed: `make test`
# runs the installed build (compiled when a C compiler is present), CI runs both. Every
# algorithm's own (tests/<algorithm>/, DEVELOPERS.md), found by name, so a new algorithm's
# join by themselves (tests/test_algorithm_lists.py checks each registered one is here).
PURE_CHECKS ?= tests/test_native_build.py tests/test_algorithms.py \
	$(wildcard tests/*/test_*_stateful.py tests/*/test_*_differential.py tests/*/test_*_fast*.py)

# The ROS bag demo: a small fleet of rosbag2 (MCAP, SQLite 3) and ROS 1 bags.
DEMO_BAG_ROBOTS ?= 6
DEMO_BAG_SECONDS ?= 20
DEMO_BAG_CONFIG ?= {"topics": ["/camera/camera_info", "/imu"], "queue_size": 10, "max_interval_duration": 20000000}

.PHONY: ros1-headers install test test-pure test-cluster conform-ros1 planted test-browser test-mqtt docs info lint typecheck unit crosshair proofs demo demo-bags bench vectors figures spec-index spec-diffs adequacy adequacy-check test-catalogue architecture clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# setup.py compiles the fast paths (timealign.native.COMPILED): a changed source rebuilds.
$(STAMP): $(INSTALL_SOURCES) | $(BIN)/python
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,spark,plot,mqtt]'
	touch $(STAMP)

install: $(STAMP)

$(CONFORM_STAMP): $(INSTALL_SOURCES) | $(BIN)/python
	@if [ -f $(STAMP) ] && [ -z "$$(find $(INSTALL_SOURCES) -newer $(STAMP))" ]; then \
		echo "timealign is installed with every extra ($(STAMP))"; \
	else \
		$(BIN)/python -m pip install -q --upgrade pip && \
		$(BIN)/python -m pip install -q -e '.[conform]'; \
	fi
	touch $(CONFORM_STAMP)

# The `docs` extra's packages alone: reinstalling the package would compile it again.
$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['docs']))" > $(VENV)/docs-requirements.txt
	$(BIN)/python -m pip install -q -r $(VENV)/docs-requirements.txt
	touch $(DOCS_STAMP)

# The documentation site (mkdocs.yml, tools/docs_site.py) into site/: README.md, docs/, spec/
# and the API reference; --strict fails on a broken link or anchor. CI builds it, and
# `make test-browser` opens it in headless Chromium (tests/test_docs_site_browser.py).
docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

lint: $(STAMP)
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/timealign info
	$(BIN)/pytest -q -m "not cluster and not browser and not mqtt and not catalogue"

# The jobs on a Spark standalone cluster started on 127.0.0.1 (tests/spark/test_spark_cluster.py),
# Ctrl-C of a live job in its own process (tests/spark/test_spark_interrupt.py), and the other
# tests of a job in a process with its own JVM (marked `cluster`: SIGKILL and restart of a
# stream, a fresh `run`'s console, a fresh session finding the rosbag source, a user's
# script outside the venv): separate JVMs do not fit the time of `make test`; CI runs them.
test-cluster: $(STAMP)
	$(BIN)/pytest -q -m cluster

# The report page in headless Chromium (tests/plot/test_plot_report_browser.py): installing
# the browser (Debian's chromium, as root) does not fit `make test`; CI runs both.
test-browser: $(DOCS_STAMP)
	command -v chromium >/dev/null || ($(APT_GET) update -q && $(APT_GET) install -y -q chromium)
	TIMEALIGN_BROWSER_REQUIRED=1 $(BIN)/pytest -q -m browser

# Live streams against a real Mosquitto on 127.0.0.1 (tests/mqtt/test_mq_live.py): Debian's
# mosquitto and mosquitto-clients (as root) and the mqtt extra; CI runs it after `make test`.
test-mqtt: $(STAMP)
	command -v mosquitto >/dev/null && command -v mosquitto_pub >/dev/null || \
		(apt-get update -q && apt-get -o DPkg::Lock::Timeout=300 install -y -q mosquitto mosquitto-clients)
	TIMEALIGN_MQTT_REQUIRED=1 $(BIN)/pytest -q -m mqtt

crosshair: $(STAMP)
	$(BIN)/python proofs/crosshair_pass.py --seconds $(CROSSHAIR_SECONDS)

test: lint typecheck unit crosshair

test-pure: $(STAMP)
	TIMEALIGN_PURE=1 $(BIN)/pytest -q $(PURE_CHECKS)

# The real ROS 1 ApproximateTime (Debian's libmessage-filters-dev, unmodified) behind the
# conformance protocol: examples/ros1_message_filters/. CI runs it after `make test`.
ROS1_ADAPTER := build/ros1_adapter
ROS1_LIBS := -lmessage_filters -lroscpp -lrostime -lroscpp_serialization -lrosconsole \
	-lboost_system -lboost_thread
ROS1_HEADERS := /usr/include/message_filters/sync_policies/approximate_time.h \
	/usr/include/nlohmann/json.hpp
CONFORM_ROS1_FUZZ ?= 2000
CONFORM_ROS1_EXPLORE ?= 5

ROS1_BENCH := build/ros1_policy_bench

# The ROS 1 policy's headers, installed as root when missing (apt-get).
ros1-headers:
	@for header in $(ROS1_HEADERS); do test -f $$header || missing=1; done; \
	if [ -n "$$missing" ]; then \
		echo "installing libmessage-filters-dev nlohmann-json3-dev (apt-get, needs root)"; \
		$(APT_GET) update -q && $(APT_GET) install -y -q libmessage-filters-dev nlohmann-json3-dev; \
	fi

$(ROS1_ADAPTER): examples/ros1_message_filters/adapter.cpp examples/ros1_message_filters/ros1_policy.h | ros1-headers
	mkdir -p build
	$(CXX) -std=c++17 -O2 -o $@ $< $(ROS1_LIBS)

# The same-run C++ baseline of bench_approximate_time.py (it builds this when it can).
$(ROS1_BENCH): benchmarks/ros1_policy_bench.cpp benchmarks/policy_bench.h examples/ros1_message_filters/ros1_policy.h | ros1-headers
	mkdir -p build
	$(CXX) -std=c++17 -O2 -o $@ $< $(ROS1_LIBS)

# The real ROS 2 C++ policy, issue 35's baseline, beside the fast path in the same run
# (bench_approximate_time.py builds this when it can; benchmarks/README.md). By default from
# upstream's unmodified sources at the pinned commits (spec/approximate_time.md), extracted
# from git repositories of ros2/message_filters and ros2/rclcpp (ROS2_MF_GIT and
# ROS2_RCLCPP_GIT: a clone's .git or a bare mirror) into build/ros2_src/, with
# benchmarks/ros2_standin/ for the rest of rcl, rcutils and rclcpp. With a ROS 2 installation
# instead, export its flags (the script's own `make` call must see them too), then
# `make -B build/ros2_policy_bench`:
#   export ROS2_CXXFLAGS="-I/opt/ros/rolling/include/rclcpp -I/opt/ros/rolling/include/message_filters ..."
#   export ROS2_LIBS="-L/opt/ros/rolling/lib -lmessage_filters -lrclcpp ..."
ROS2_BENCH := build/ros2_policy_bench
ROS2_MF_GIT ?= /work/.mirror/ros2+message_filters/repo
ROS2_MF_COMMIT := 361e42c78ee08a7b63397a143eae87fda7514d61
ROS2_RCLCPP_GIT ?= /work/.mirror/ros2+rclcpp/repo
ROS2_RCLCPP_COMMIT := a0a2a067d84fd6a38ab4f71b691d51ca5aa97ba5
ROS2_SRC := build/ros2_src
ROS2_EXTRACTED := $(ROS2_SRC)/.extracted-$(ROS2_MF_COMMIT)-$(ROS2_RCLCPP_COMMIT)
ROS2_STANDIN := $(wildcard benchmarks/ros2_standin/*/*.h* benchmarks/ros2_standin/*/*/*.h*)
ROS2_BENCH_DEPS := benchmarks/ros2_policy_bench.cpp benchmarks/policy_bench.h \
	examples/ros2_message_filters/ros2_policy.h
ROS2_RCLCPP_FILES := rclcpp/include/rclcpp/time.hpp rclcpp/include/rclcpp/duration.hpp \
	rclcpp/src/rclcpp/time.cpp rclcpp/src/rclcpp/duration.cpp

ifneq ($(strip $(ROS2_CXXFLAGS)),)
$(ROS2_BENCH): $(ROS2_BENCH_DEPS)
	mkdir -p build
	$(CXX) -std=c++17 -O2 $(ROS2_CXXFLAGS) -o $@ $< $(ROS2_LIBS)
else
# Only these files: the policy's headers and connection.cpp, rclcpp's Time and Duration.
$(ROS2_EXTRACTED):
	@for pinned in "$(ROS2_MF_GIT) $(ROS2_MF_COMMIT) ros2/message_filters ROS2_MF_GIT" \
		"$(ROS2_RCLCPP_GIT) $(ROS2_RCLCPP_COMMIT) ros2/rclcpp ROS2_RCLCPP_GIT"; do \
		set -- $$pinned; \
		git --git-dir="$$1" cat-file -e "$$2^{commit}" 2>/dev/null || { \
			echo "no $$3 @$$2 in $$1 (set $$4 to a git repository holding it, or ROS2_CXXFLAGS and ROS2_LIBS to a ROS 2 installation)" >&2; \
			exit 1; }; \
	done
	rm -rf $(ROS2_SRC) && mkdir -p $(ROS2_SRC)/message_filters $(ROS2_SRC)/rclcpp
	git --git-dir="$(ROS2_MF_GIT)" archive $(ROS2_MF_COMMIT) include src/connection.cpp \
		| tar -x -C $(ROS2_SRC)/message_filters
	git --git-dir="$(ROS2_RCLCPP_GIT)" archive $(ROS2_RCLCPP_COMMIT) $(ROS2_RCLCPP_FILES) \
		| tar -x -C $(ROS2_SRC)/rclcpp
	touch $@

ROS2_INCLUDES := -I$(ROS2_SRC)/rclcpp/rclcpp/include -Ibenchmarks/ros2_standin \
	-I$(ROS2_SRC)/message_filters/include
ROS2_UPSTREAM_SOURCES := $(ROS2_SRC)/message_filters/src/connection.cpp \
	$(ROS2_SRC)/rclcpp/rclcpp/src/rclcpp/time.cpp $(ROS2_SRC)/rclcpp/rclcpp/src/rclcpp/duration.cpp

# Separate translation units, as in the shared libraries; -O2 like the ROS 1 baseline.
$(ROS2_BENCH): $(ROS2_BENCH_DEPS) $(ROS2_STANDIN) $(ROS2_EXTRACTED)
	$(CXX) -std=c++17 -O2 $(ROS2_INCLUDES) -o $@ $< $(ROS2_UPSTREAM_SOURCES)
endif

conform-ros1: $(CONFORM_STAMP) $(ROS1_ADAPTER)
	$(BIN)/timealign conform approximate_time --target ros1 --cmd ./$(ROS1_ADAPTER) \
		--fuzz $(CONFORM_ROS1_FUZZ) --seed 1 --explore $(CONFORM_ROS1_EXPLORE) --timeout 60 --quiet

# Issue 41's planted one-line bugs in the real upstreams (proofs/planted_upstreams.py): each
# upstream copied from its git snapshot into build/planted/, one line changed, built with the
# shipped adapter and checked by `timealign conform` (suite, fuzz, explore; reports saved
# beside it). Needs g++, cargo, structlog and the snapshots; skips, saying why, what is
# missing. Not part of `make test` (minutes, toolchains); no CI runs it.
PLANTED_FUZZ ?= 1000
planted: $(STAMP)
	$(BIN)/python -m proofs.planted_upstreams --fuzz $(PLANTED_FUZZ)

info: $(STAMP)
	$(BIN)/timealign info

proofs: $(STAMP)
	$(BIN)/python proofs/crosshair_pass.py --seconds $(PROOF_SECONDS) --report-all
	$(BIN)/python -m proofs.explore
	$(BIN)/python -m proofs.explore_rate_aware_batcher  # liveness probes (spec RB, bounded exploration)
	HYPOTHESIS_PROFILE=nightly $(BIN)/pytest -q tests/test_bad_input.py tests/test_cli_fuzz.py tests/spark/test_spark_cli_fuzz.py tests/spark/test_spark_input_fuzz.py tests/rosbag/test_rosbag_damage.py  # the bad-input, command-line (paths, damaged inputs), input-reader and bag-damage fuzz, longer
	$(BIN)/python -m proofs.conformance_study  # mutation study of the conformance harness (README table)

vectors: $(STAMP)
	$(BIN)/python -m cases.generate

# The spec's pictures (spec/figures/*.svg), drawn from the vectors; a test fails when stale.
figures: $(STAMP)
	$(BIN)/python -m cases.figures

# spec/index.md, the cross-reference of the spec ids (code, tests, vectors per id); a test
# fails when it is stale.
spec-index: $(STAMP)
	$(BIN)/python -m tools.spec_index

# The diagram of ARCHITECTURE.md, drawn from the layers tests/test_layers.py declares and
# checks, and its "What lives where", written from the tree (tools/architecture.py); a test
# fails when either is stale.
architecture: $(STAMP)
	$(BIN)/python -m tests.test_layers
	$(BIN)/python -m tools.architecture

# The "What changes between profiles" sections of the specs with profiles, from seeded
# `timealign diff` runs (spec/figures/diffs/); a test fails when they are stale. Run
# `make spec-index` after it.
spec-diffs: $(STAMP)
	$(BIN)/python -m tools.spec_diffs

# The adequacy table of spec/conformance.md (CF-R44): which of the suite, the default fuzz
# and the default explore kill each catalogued rule variant; adequacy-check fails when the
# committed table is stale (.ci/run). Run `make spec-index` after it.
adequacy: $(STAMP)
	$(BIN)/python -m tools.adequacy

adequacy-check: $(STAMP)
	$(BIN)/python -m tools.adequacy --check

# The diagnosis over the whole catalogue (CF-R42, CF-R43): a stand-in port per catalogued
# variant through conform's suite, fuzz and explore, named as its explanation (.ci/run).
test-catalogue: $(STAMP)
	$(BIN)/pytest -q -m catalogue

demo: $(STAMP)
	$(BIN)/timealign generate --output $(DEMO_DIR)/fleet --robots $(DEMO_ROBOTS) --messages $(DEMO_MESSAGES)
	$(BIN)/timealign run approximate_time --input $(DEMO_DIR)/fleet --output $(DEMO_DIR)/out \
		--config '$(DEMO_CONFIG)' --summary $(DEMO_DIR)/summary.json --report $(DEMO_DIR)/report
	$(BIN)/timealign verify $(DEMO_DIR)/out

demo-bags: $(STAMP)
	$(BIN)/python -m timealign.rosbag.demo --output $(DEMO_DIR)/bags --robots $(DEMO_BAG_ROBOTS) \
		--seconds $(DEMO_BAG_SECONDS)
	$(BIN)/timealign run approximate_time --format rosbag --input $(DEMO_DIR)/bags \
		--output $(DEMO_DIR)/bags-out --config '$(DEMO_BAG_CONFIG)' \
		--summary $(DEMO_DIR)/bags-summary.json
	$(BIN)/timealign verify $(DEMO_DIR)/bags-out

bench: $(STAMP)
	for script in benchmarks/bench_*.py; do $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info reference/*.egg-info reference/timealign/_native.json
	find reference -name '*.so' -delete
	rm -rf .mypy_cache .ruff_cache .hypothesis
