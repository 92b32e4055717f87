"""Closing verdict of `make test`: one line per run, then the totals.

    python tests/verdict.py SUMMARY_FILE LABEL...

SUMMARY_FILE has one line per finished pytest run (written by conftest.py:
label, passed, failed, skipped, exit status); each LABEL names a run that
must be there, or is "name=ok" / "name=FAILED" for a step that is no pytest
run. Exits 1 if a run failed, crashed before reporting or ran no test at all.
"""

import sys


def main(argv):
    path, labels = argv[0], argv[1:]
    runs = {}
    try:
        with open(path) as f:
            for line in f:
                label, passed, failed, skipped, status = line.rstrip("\n").split("\t")
                runs[label] = (int(passed), int(failed), int(skipped), int(status))
    except FileNotFoundError:
        pass
    total = [0, 0, 0]
    bad = []
    print("=== verdict ===")
    for label in labels:
        if "=" in label:                          # a step that is no pytest run
            name, outcome = label.rsplit("=", 1)
            print(f"  {name}: {outcome}")
            if outcome != "ok" and not outcome.startswith("skipped"):
                bad.append(name)
            continue
        if label not in runs:
            print(f"  {label:>9}: did not finish (crashed, aborted or timed out)")
            bad.append(label)
            continue
        passed, failed, skipped, status = runs[label]
        print(f"  {label:>9}: {passed} passed, {failed} failed, {skipped} skipped")
        total[0] += passed
        total[1] += failed
        total[2] += skipped
        if failed or status not in (0, 5):
            bad.append(label)
    if total[0] == 0:
        bad.append("no test passed")
    if bad:
        print(f"  failing: {', '.join(bad)}")
    print(f"{'FAILED' if bad else 'OK'}: {total[0]} passed, {total[1]} failed, "
          f"{total[2]} skipped")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
