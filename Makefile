# pyhccl: one-command set-up, build, demo and tests (see README.md).
#   make demo   build if needed, then run the gradient-aggregation example on 4 ranks
#   make test   build if needed, then run the whole test suite at 1, 2 and 4 ranks
PYTHON3 ?= python3
VENV    := .venv
PY      := $(VENV)/bin/python
MPIEXEC := $(VENV)/bin/mpiexec
RANKS   ?= 1 2 4
PYTEST_ARGS ?=

.PHONY: all build demo test test-multihost test-c clean
all: build

$(VENV)/.installed: requirements-dev.txt
	$(PYTHON3) -m venv $(VENV)
	$(VENV)/bin/pip install -q -r requirements-dev.txt
	touch $@

# In-place build; a .pth file puts this checkout on the venv's path (like pip install -e).
build: $(VENV)/.installed
	$(PY) setup.py -q build_ext --inplace
	$(PY) -c "import os, site; open(os.path.join(site.getsitepackages()[0], 'pyhccl-dev.pth'), 'w').write(os.getcwd() + '\\n')"

demo: build
	$(MPIEXEC) -n 4 $(PY) examples/allreduce.py

examples/allreduce_c: examples/allreduce.c build
	$(VENV)/bin/mpicc -O2 -Iinclude $< -o $@ -Lpyhccl/lib -lhccl -lascendcl -lm -Wl,-rpath,'$$ORIGIN/../pyhccl/lib'

# The examples on 4 ranks (each checks its own result), then pytest at each rank
# count (a failing rank aborts the job; every level has a timeout).
test: build examples/allreduce_c
	timeout 120 $(MPIEXEC) -n 4 examples/allreduce_c
	timeout 120 $(MPIEXEC) -n 4 $(PY) examples/allreduce.py
	timeout 300 $(MPIEXEC) -n 4 $(PY) examples/train.py
	for n in $(RANKS); do \
	  echo "=== pytest on $$n rank(s) ==="; \
	  timeout 1200 $(MPIEXEC) -n $$n $(PY) -m pytest -q $(PYTEST_ARGS) || exit 1; \
	done

# Only the tests on simulated hosts (root; see docs/MULTIHOST_TESTING.md). make test runs
# them too, in its 1-rank pass.
test-multihost: build
	timeout 900 $(PY) -m pytest -q $(PYTEST_ARGS) tests/multihost

clean:
	rm -rf build pyhccl/lib pyhccl/include pyhccl/_core.c pyhccl/_core*.so examples/allreduce_c
