"""What the TCP transport's CRC32C check (PYHCCL_TCP_CRC) costs, in one run.

benchmarks/paired.py with A the check on and B off: one job makes both communicators and
runs the collective on each by turns, so the two share the machine's state of the moment.
The column "CRC on / CRC off - 1" is the cost.

    sudo python benchmarks/tcp_crc.py [--layout 2x1] [--rate 10gbit|none] [--op allreduce]
        [-b 1M -e 64M] [--rounds 20] [-n 2]

Needs root (namespaces), like the multi-host tests.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import paired  # noqa: E402


def main():
    opts = paired.parser(__doc__.split("\n\n")[0], settings=False).parse_args()
    opts.a, opts.b = "PYHCCL_TCP_CRC=1", "PYHCCL_TCP_CRC=0"
    return paired.run(opts, __file__, labels=("CRC on", "CRC off"))


if __name__ == "__main__":
    sys.exit(main())
