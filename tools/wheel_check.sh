#!/usr/bin/env bash
# Install a pyhccl wheel as a user would, on a machine with no compiler, and run the demo.
#   tools/wheel_check.sh wheelhouse/pyhccl_host-*.whl      (make test-wheel)
# Checks the wheel first (manylinux tag, stripped libraries, no generated C, a licence),
# then makes a fresh venv, installs the wheel with mpi4py and the mpich wheel from PyPI
# with no C compiler on PATH, and runs examples/allreduce.py on 4 ranks from outside the
# checkout (so the installed copy is imported).
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 WHEEL" >&2; exit 2; }
wheel=$(realpath "$1")
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
say() { echo "wheel_check: $*"; }

case "$(basename "$wheel")" in
  *-manylinux_*.whl) ;;
  *) echo "wheel_check: $wheel is not a manylinux wheel (run make wheel)" >&2; exit 1 ;;
esac
python3 -m zipfile -e "$wheel" "$tmp/unpacked"
if find "$tmp/unpacked" -name '*.c' -o -name '*.cpp' -o -name '*.pyx' | grep .; then
  echo "wheel_check: the wheel ships generated or Cython sources (above)" >&2; exit 1
fi
for so in "$tmp"/unpacked/pyhccl/lib/*.so "$tmp"/unpacked/pyhccl/_core*.so \
          "$tmp"/unpacked/pyhccl/bin/cann_tool; do
  if readelf -S "$so" | grep -qE '\.symtab|\.debug_'; then
    echo "wheel_check: $so is not stripped" >&2; exit 1
  fi
done
for mod in pyhccl/torch/__init__.py pyhccl/torch/_backend.py; do   # the torch backend's package
  [ -f "$tmp/unpacked/$mod" ] || { echo "wheel_check: the wheel lacks $mod" >&2; exit 1; }
done
ls "$tmp"/unpacked/*.dist-info/licenses/LICENSE >/dev/null
grep -q '^License-Expression: Apache-2.0' "$tmp"/unpacked/*.dist-info/METADATA
say "$(basename "$wheel"): manylinux, stripped, no C sources, Apache-2.0 licence"

# A PATH with the venv and the basic tools only: no gcc, cc, g++, c++ or ld.
mkdir "$tmp/bin"
for tool in sh bash env cat ls rm mkdir uname hostname timeout; do
  if command -v "$tool" >/dev/null; then ln -s "$(command -v "$tool")" "$tmp/bin/$tool"; fi
done
python3 -m venv "$tmp/venv"
export PATH="$tmp/venv/bin:$tmp/bin"
unset CC CXX LDSHARED
for cc in gcc cc g++ c++ ld; do
  if command -v "$cc" >/dev/null; then echo "wheel_check: $cc is still on PATH" >&2; exit 1; fi
done
say "installing the wheel, mpi4py and mpich into a fresh venv (no compiler on PATH)"
pip install --progress-bar off -q "$wheel" mpi4py mpich
cd "$tmp"
python - <<'EOF'
import os, sys
import pyhccl
assert pyhccl.__file__.startswith(sys.prefix), pyhccl.__file__
assert pyhccl.HOST_RUNTIME
from pyhccl import toolkit
prefix = toolkit.prefix()  # raises if the installed toolkit lacks a library, header or tool
assert toolkit.missing(prefix) == [] and os.access(os.path.join(prefix, "bin", "cann_tool"), os.X_OK)
print("wheel_check: installed", pyhccl.__version__, "at", os.path.dirname(pyhccl.__file__))
EOF
python -m pyhccl --libs
say "the toolkit: cann_tool --version and a 2-rank cann_tool check from CANN_HOME/bin"
CANN_HOME=$(python -m pyhccl --prefix)
"$CANN_HOME/bin/cann_tool" --version
timeout 120 "$CANN_HOME/bin/cann_tool" check -n 2
say "running the demo: mpiexec -n 4 python examples/allreduce.py"
timeout 300 mpiexec -n 4 python "$root/examples/allreduce.py"
say "ok"
