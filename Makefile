# The two commands a newcomer needs: `make run` and `make test`.
# Each creates or reuses .venv and installs what it needs by itself.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.societas-installed

export HF_HUB_OFFLINE := 1
export RAY_USAGE_STATS_ENABLED := 0

.PHONY: run test lint bench clean-venv

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "societas needs Python 3.11+, found " + sys.version.split()[0])'
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	@touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/societas demo

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(PY) -m pytest -q

lint: $(STAMP)
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

bench: $(STAMP)
	$(PY) benchmarks/memory_ops.py --json benchmarks/results/memory_ops.json

clean-venv:
	rm -rf $(VENV)
