#!/usr/bin/env bash
# The article's four steps, performed literally with pyhccl as the CANN toolkit:
#   1. export CANN_HOME (from `python -m pyhccl --prefix` instead of /opt/cann), PATH,
#      LD_LIBRARY_PATH; cann_tool --version
#   2. the program: aigc_hccl_allreduce_example.cpp (ours, beside this script)
#   3. the article's g++ line, unchanged
#   4. RANKS ranks started in the background by hand (no MPI, no variables); every rank
#      must print the expected first five sums (0.6 4.6 8.6 12.6 16.6 at 4 ranks)
# and step 4 again RUNS times in a row (nothing may be left behind by a run).
#
#   examples/seed/four_steps.sh                    # make seed-demo runs it
#   PYTHON=.venv/bin/python RANKS=2 RUNS=1 examples/seed/four_steps.sh
#
# Variables: PYTHON (a Python with pyhccl; default python3), RANKS (4), RUNS (2), WORKDIR
# (where to build and keep the logs; default a fresh temporary directory, removed on
# success), SOURCE (another aigc_hccl_allreduce_example.cpp to build, e.g. the article's
# own), RANK_TIMEOUT (seconds a rank may take, default 120), GROUP (a group name passed as
# the program's third argument instead of its default "default_aigc_comm_group", so that
# two runs can share a machine; our program only). Exit status 0 when every rank of every
# run printed the right values and exited 0.
set -eo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PYTHON=${PYTHON:-python3}
RANKS=${RANKS:-4}
RUNS=${RUNS:-2}
SOURCE=${SOURCE:-$HERE/aigc_hccl_allreduce_example.cpp}
RANK_TIMEOUT=${RANK_TIMEOUT:-120}
if [ -z "$WORKDIR" ]; then
  WORKDIR=$(mktemp -d "${TMPDIR:-/tmp}/pyhccl-seed.XXXXXX")
  CLEAN_WORKDIR=1
fi
mkdir -p "$WORKDIR"

# Echo a command as the reader would type it, then run it.
say() { printf '$ %s\n' "$*"; }

# What rank output must show at n ranks: element i = sum over r of (r*0.1 + i), printed
# as std::cout prints a float (6 significant digits).
expected_values() {
  awk -v n="$1" 'BEGIN { for (i = 0; i < 5; i++) printf "%g ", 0.1 * n * (n - 1) / 2 + n * i }'
}

echo "# Step 1: the environment (CANN_HOME from pyhccl instead of /opt/cann)"
say 'export CANN_HOME=$(python -m pyhccl --prefix)'
CANN_HOME=$("$PYTHON" -m pyhccl --prefix)
export CANN_HOME
echo "  (CANN_HOME=$CANN_HOME)"
say 'export PATH=$CANN_HOME/bin:$PATH'
export PATH=$CANN_HOME/bin:$PATH
say 'export LD_LIBRARY_PATH=$CANN_HOME/lib:$LD_LIBRARY_PATH'
export LD_LIBRARY_PATH=$CANN_HOME/lib:$LD_LIBRARY_PATH
say 'cann_tool --version'
cann_tool --version

echo
echo "# Step 2: the program, one process per rank, rank and world size from argv"
cp "$SOURCE" "$WORKDIR/aigc_hccl_allreduce_example.cpp"
cd "$WORKDIR"
echo "  ($SOURCE, built in $WORKDIR)"

echo
echo "# Step 3: the build"
say 'g++ -o aigc_hccl_allreduce_example aigc_hccl_allreduce_example.cpp -I$CANN_HOME/include -L$CANN_HOME/lib -lacl_tdt -lacl_rt -lacl_mdl -std=c++11'
g++ -o aigc_hccl_allreduce_example aigc_hccl_allreduce_example.cpp -I$CANN_HOME/include -L$CANN_HOME/lib -lacl_tdt -lacl_rt -lacl_mdl -std=c++11

want=$(expected_values "$RANKS")
status=0
for run in $(seq 1 "$RUNS"); do
  echo
  echo "# Step 4, run $run of $RUNS: $RANKS ranks started by hand, in the background"
  pids=()
  for rank in $(seq 0 $((RANKS - 1))); do
    say "./aigc_hccl_allreduce_example $rank $RANKS${GROUP:+ $GROUP} &"
    timeout "$RANK_TIMEOUT" ./aigc_hccl_allreduce_example "$rank" "$RANKS" ${GROUP:+"$GROUP"} \
      > "run$run.rank$rank.log" 2>&1 &
    pids+=($!)
  done
  for rank in $(seq 0 $((RANKS - 1))); do
    rc=0
    wait "${pids[$rank]}" || rc=$?
    line=$(grep "^Rank $rank: Global gradients (first 5 elements): " "run$run.rank$rank.log" || true)
    printf '  rank %d: exit %d | %s\n' "$rank" "$rc" "${line:-(no result line)}"
    if [ "$rc" != 0 ] || [ "${line#*: }" != "Global gradients (first 5 elements): $want" ]; then
      echo "  rank $rank FAILED (expected: $want); its output:" >&2
      sed 's/^/    | /' "run$run.rank$rank.log" >&2
      status=1
    fi
  done
done

echo
if [ "$status" = 0 ]; then
  echo "four steps: every rank of $RUNS run(s) of $RANKS printed: $want"
  [ -n "$CLEAN_WORKDIR" ] && rm -rf "$WORKDIR"
else
  echo "four steps: FAILED (logs in $WORKDIR)" >&2
fi
exit "$status"
