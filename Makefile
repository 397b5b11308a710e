# planarena quick start: `make repro` (set up, then `dvc repro` on the default profile) and
# `make test` (set up, then the test suite). Both create .venv on first use.
SHELL := /bin/bash
VENV := .venv
ACTIVATE := source $(VENV)/bin/activate &&
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
# pytest worker processes of `make test` (pytest-xdist; a test file stays on one worker, so its
# module fixtures are built once): 2 fits CI's 2 cores and 4 GB; 1 runs the suite in one process
TEST_JOBS ?= 2

.PHONY: setup repro test bench smoke encoders outside

setup:
	bash scripts/setup.sh

repro: setup
	$(ACTIVATE) dvc repro

test: setup
	$(ACTIVATE) python -m pytest -n $(TEST_JOBS) --dist loadfile; rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "pytest collected no tests (exit 5): failing" >&2; fi; exit $$rc

smoke: setup
	$(ACTIVATE) dvc exp run -S profile=smoke

bench: setup
	$(ACTIVATE) python benchmarks/run_all.py

# EmbedPlan's MPNet encoder (not needed by `make repro`): ~400 MB into ~/.cache/planarena/encoders
encoders: setup
	$(ACTIVATE) planarena encoders get mpnet

# Outside planners run through the IPC contract (rows `bfgp`, `pyperplan_gbfs_hff`; off by default, on in
# profile full): BFGP++ and pyperplan in their own environment, .venv-outside (tarski needs an antlr4
# runtime that DVC's own dependencies do not accept)
outside:
	python3 -m venv .venv-outside && .venv-outside/bin/pip install -q -r requirements-outside.txt
