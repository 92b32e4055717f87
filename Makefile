# pyhccl: one-command set-up, build, demo and tests (see README.md).
#   make demo   build if needed, then run the gradient-aggregation example on 4 ranks
#   make test   build if needed, then run the whole test suite at 1, 2 and 4 ranks
PYTHON3 ?= python3
VENV    := .venv
PY      := $(VENV)/bin/python
MPIEXEC := $(VENV)/bin/mpiexec
RANKS   ?= 1 2 4
PYTEST_ARGS ?=

.PHONY: all build demo test test-c clean
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
# count (a failing rank aborts the job; every level has a timeout), then the static
# checks once (stubtest, mypy --strict, Sphinx); rank 0 reports, tests/verdict.py
# closes with one line per run and the totals.
SUMMARY := build/test-summary.txt
test: build examples/allreduce_c
	timeout 120 $(MPIEXEC) -n 4 examples/allreduce_c
	timeout 120 $(MPIEXEC) -n 4 $(PY) examples/allreduce.py
	timeout 300 $(MPIEXEC) -n 4 $(PY) examples/train.py
	@mkdir -p build; rm -f $(SUMMARY); status=0; labels=""; \
	for n in $(RANKS); do \
	  if [ $$n = 1 ]; then label="1 rank"; else label="$$n ranks"; fi; labels="$$labels|$$label"; \
	  echo "=== pytest on $$label ==="; \
	  PYHCCL_TEST_SUMMARY=$(SUMMARY) PYHCCL_TEST_LABEL="$$label" timeout 1200 \
	    $(MPIEXEC) -n $$n $(PY) -m pytest -q -m "not once" $(PYTEST_ARGS); \
	  rc=$$?; [ $$rc = 0 ] || [ $$rc = 5 ] || status=1; \
	done; \
	echo "=== static checks, once: stubtest, mypy --strict, Sphinx ==="; \
	PYHCCL_TEST_SUMMARY=$(SUMMARY) PYHCCL_TEST_LABEL=static timeout 900 \
	  $(MPIEXEC) -n 1 $(PY) -m pytest -q -m once $(PYTEST_ARGS); \
	rc=$$?; [ $$rc = 0 ] || [ $$rc = 5 ] || status=1; \
	IFS='|'; $(PY) tests/verdict.py $(SUMMARY) $${labels#|} static || status=1; exit $$status

clean:
	rm -rf build pyhccl/lib pyhccl/include pyhccl/_core.c pyhccl/_core*.so examples/allreduce_c
