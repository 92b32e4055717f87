"""Every pyhccl collective across (simulated) hosts, checked exactly against numpy.

Run under mpiexec on any layout (tests/multihost/test_multihost_pyhccl.py starts it):

    mpiexec ... -n 4 python tests/multihost/worker_collectives.py [--big] [--only NAME=ALGO]

--only all_to_all=rail runs only that collective and fails a case (count > 0) that another
algorithm ran (the flight record's), for a test that forces one with PYHCCL_ALGO.

Each rank prints "FAIL rank=K case=...: what" for a failing case (the first 20) and
ends with one line "RESULT rank=K ok cases=N" or "RESULT rank=K error=...". Values are
small integers, so every sum is exact in every dtype; results that must be equal on
every rank are compared by digest across ranks.
"""
import functools
import hashlib
import socket
import sys
import time

import numpy as np
from mpi4py import MPI

import pyhccl
from pyhccl.mpi import comm_from_mpi

WORLD = MPI.COMM_WORLD
RANK, SIZE = WORLD.Get_rank(), WORLD.Get_size()
DTYPES = ["int32", "float32", "float16", "bfloat16", "float64"]
NP_OP = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}
KINDS = ("device", "host")


def say(line):
    sys.stdout.write(line + "\n")      # one write: lines of ranks stay whole under mpiexec
    sys.stdout.flush()


# -- values and buffers ------------------------------------------------------------------------
PERIOD = {"sum": 5, "prod": 3, "max": 11, "min": 11}


def pattern(op, rank, salt=0):
    """One period of rank `rank`'s values for `op`: small integers, so that every reduction
    of them is exact in every dtype."""
    i = np.arange(PERIOD[op], dtype=np.int64) + salt
    if op == "prod":
        return np.where((i + rank) % 3 == 0, 2.0, 1.0)
    if op in ("max", "min"):
        return ((i * 7 + rank * 3) % 11 - 5).astype(np.float64)
    return (i % 5 + 1 + rank).astype(np.float64)


@functools.lru_cache(maxsize=256)
def values(op, rank, n, salt=0):
    """`n` values of rank `rank` (float64, read-only): its pattern repeated."""
    v = np.resize(pattern(op, rank, salt), n)
    v.flags.writeable = False
    return v


@functools.lru_cache(maxsize=64)
def reduced(op, n):
    """What reducing every rank's values(op, rank, n) with `op` gives."""
    one = NP_OP[op](np.stack([pattern(op, r) for r in range(SIZE)]), axis=0)
    v = np.resize(one, n)
    v.flags.writeable = False
    return v


def encode(v, dtype):
    """float64 values -> array of `dtype`; bfloat16 as uint16 bits (the values are exact in
    bfloat16, so its bits are the top half of float32's)."""
    if dtype == "bfloat16":
        return (v.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return v.astype(dtype)


def decode(a, dtype):
    a = raw(a)
    if dtype == "bfloat16":
        return (a.view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return a.astype(np.float64)


def make(kind, v, dtype):
    """A buffer holding values `v`: DeviceArray (aclrtMalloc) or numpy (bfloat16 as uint16)."""
    host = encode(v, dtype)
    return pyhccl.asarray(host, dtype=dtype) if kind == "device" else host.copy()


def kw(kind, dtype):
    return {"dtype": pyhccl.BFLOAT16} if dtype == "bfloat16" and kind == "host" else {}


def raw(buf):
    return np.ascontiguousarray(buf.get() if isinstance(buf, pyhccl.DeviceArray) else buf)


# -- one case per collective -------------------------------------------------------------------
# Each returns (problems, digest of what must be equal on every rank or None).
def all_reduce(comm, dtype, n, kind, inplace, op, root):
    expect = reduced(op, n)
    send = make(kind, values(op, RANK, n), dtype)
    if inplace:
        comm.all_reduce(send, op=op, **kw(kind, dtype))
        sync()
        return check(send, expect, dtype), digest(send)
    recv = make(kind, np.full(n, -1.0), dtype)
    comm.all_reduce(send, recv, op, **kw(kind, dtype))
    sync()
    return check(recv, expect, dtype) + unchanged(send, values(op, RANK, n), dtype), digest(recv)


def reduce_scatter(comm, dtype, n, kind, inplace, op, root):
    expect = reduced(op, n * SIZE)[RANK * n:(RANK + 1) * n]
    send = make(kind, values(op, RANK, n * SIZE), dtype)
    if inplace:
        mine = send[RANK * n:(RANK + 1) * n]
        comm.reduce_scatter(send, mine, op, **kw(kind, dtype))
        sync()
        return check(mine, expect, dtype), None
    recv = make(kind, np.full(n, -1.0), dtype)
    comm.reduce_scatter(send, recv, op, **kw(kind, dtype))
    sync()
    return check(recv, expect, dtype), None


def all_gather(comm, dtype, n, kind, inplace, op, root):
    expect = np.concatenate([values("sum", r, n) for r in range(SIZE)])
    if inplace:
        whole = make(kind, np.full(n * SIZE, -1.0), dtype)
        whole[RANK * n:(RANK + 1) * n] = encode(values("sum", RANK, n), dtype)
        comm.all_gather(whole[RANK * n:(RANK + 1) * n], whole, **kw(kind, dtype))
        sync()
        return check(whole, expect, dtype), digest(whole)
    recv = make(kind, np.full(n * SIZE, -1.0), dtype)
    comm.all_gather(make(kind, values("sum", RANK, n), dtype), recv, **kw(kind, dtype))
    sync()
    return check(recv, expect, dtype), digest(recv)


def broadcast(comm, dtype, n, kind, inplace, op, root):
    buf = make(kind, values("sum", RANK, n), dtype)
    comm.broadcast(buf, root, **kw(kind, dtype))
    sync()
    return check(buf, values("sum", root, n), dtype), digest(buf)


def reduce(comm, dtype, n, kind, inplace, op, root):
    expect = reduced(op, n)
    send = make(kind, values(op, RANK, n), dtype)
    if inplace:
        comm.reduce(send, op=op, root=root, **kw(kind, dtype))
        sync()
        return (check(send, expect, dtype) if RANK == root else []), None
    recv = make(kind, np.full(n, -1.0), dtype)
    comm.reduce(send, recv, op, root, **kw(kind, dtype))
    sync()
    if RANK == root:
        return check(recv, expect, dtype), None
    return unchanged(recv, np.full(n, -1.0), dtype, "recvbuf written on a non-root"), None


def scatter(comm, dtype, n, kind, inplace, op, root):
    src = make(kind, values("sum", root, n * SIZE, salt=3), dtype) if RANK == root else None
    recv = make(kind, np.full(n, -1.0), dtype)
    comm.scatter(src, recv, root, **kw(kind, dtype))
    sync()
    return check(recv, values("sum", root, n * SIZE, salt=3)[RANK * n:(RANK + 1) * n], dtype), None


def all_to_all(comm, dtype, n, kind, inplace, op, root):
    # block j of rank r holds 10 * r + j + position % 3: every block tells where it came from
    block = lambda r, j: np.full(n, 10.0 * r + j) + np.arange(n) % 3  # noqa: E731
    send = make(kind, np.concatenate([block(RANK, j) for j in range(SIZE)]), dtype)
    recv = make(kind, np.full(n * SIZE, -1.0), dtype)
    comm.all_to_all(send, recv, **kw(kind, dtype))
    sync()
    return check(recv, np.concatenate([block(r, RANK) for r in range(SIZE)]), dtype), None


def v_blocks(n):
    """Uneven blocks for the V collectives: rank r's holds n * (r % 3) // 2 + r % 2
    elements (rank 0's none), so sizes differ within and across hosts; and where each
    starts, packed in rank order."""
    counts = [n * (r % 3) // 2 + r % 2 for r in range(SIZE)]
    return counts, [sum(counts[:r]) for r in range(SIZE)]


def gapped(counts):
    """Displacements of `counts` in reverse rank order, one element apart, and the
    elements the buffer then needs."""
    return [sum(counts[q] + 1 for q in range(r + 1, SIZE)) for r in range(SIZE)], sum(counts) + SIZE


def reduce_scatter_v(comm, dtype, n, kind, inplace, op, root):
    """Packed blocks from host buffers; from device buffers in reverse rank order, one
    element apart (out of place)."""
    counts, packed = v_blocks(n)
    mine = values(op, RANK, sum(counts))
    lo, hi = packed[RANK], packed[RANK] + counts[RANK]
    expect = reduced(op, sum(counts))[lo:hi]
    if kind == "device":
        displs, total = gapped(counts)
        v = np.ones(total)
        for r in range(SIZE):
            v[displs[r]:displs[r] + counts[r]] = mine[packed[r]:packed[r] + counts[r]]
        send, inplace = make(kind, v, dtype), False
    else:
        displs, v = packed, mine
        send = make(kind, v, dtype)
    if inplace and counts[RANK] > 0:
        block = send[lo:hi]
        comm.reduce_scatter_v(send, block, counts, displs, op, **kw(kind, dtype))
        sync()
        return check(block, expect, dtype), None
    recv = make(kind, np.full(counts[RANK], -1.0), dtype)
    comm.reduce_scatter_v(send, recv, counts, displs, op, **kw(kind, dtype))
    sync()
    return check(recv, expect, dtype) + unchanged(send, v, dtype), None


def all_gather_v(comm, dtype, n, kind, inplace, op, root):
    """Packed blocks into host buffers; into device buffers in reverse rank order, one
    element apart (the gaps must stay untouched)."""
    counts, displs = v_blocks(n)
    block = lambda r: values("sum", r, counts[r], salt=r)  # noqa: E731
    total = sum(counts)
    if kind == "device":
        displs, total = gapped(counts)
    expect = np.full(total, -1.0)
    for r in range(SIZE):
        expect[displs[r]:displs[r] + counts[r]] = block(r)
    recv = make(kind, np.full(total, -1.0), dtype)
    comm.all_gather_v(make(kind, block(RANK), dtype), recv, counts, displs, **kw(kind, dtype))
    sync()
    return check(recv, expect, dtype), digest(recv)


def send_recv(comm, dtype, n, kind, inplace, op, root):
    """A ring (even ranks send first), then shifts in one group: every shift 1..SIZE-1
    for small counts, SIZE // 2 (across hosts in 2x2) for large ones."""
    problems = []
    if SIZE == 1:
        return problems, None
    right, left = (RANK + 1) % SIZE, (RANK - 1) % SIZE
    out, got = make(kind, values("sum", RANK, n), dtype), make(kind, np.full(n, -1.0), dtype)
    pair = [lambda: comm.send(out, right, **kw(kind, dtype)),
            lambda: comm.recv(got, left, **kw(kind, dtype))]
    for call in (pair if RANK % 2 == 0 else pair[::-1]):
        call()
    sync()
    problems += check(got, values("sum", left, n), dtype, "ring: ")
    shifts = list(range(1, SIZE)) if n <= 1000 else [SIZE // 2]
    outs = [make(kind, values("sum", RANK, n, salt=k), dtype) for k in shifts]
    gots = [make(kind, np.full(n, -1.0), dtype) for _ in shifts]
    with pyhccl.group():
        for k, out_k, got_k in zip(shifts, outs, gots):
            comm.send(out_k, (RANK + k) % SIZE, **kw(kind, dtype))
            comm.recv(got_k, (RANK - k) % SIZE, **kw(kind, dtype))
    sync()
    for k, got_k in zip(shifts, gots):
        problems += check(got_k, values("sum", (RANK - k) % SIZE, n, salt=k), dtype,
                          f"shift {k}: ")
    return problems, None


COLLECTIVES = {"all_reduce": (all_reduce, True), "reduce_scatter": (reduce_scatter, True),
               "all_gather": (all_gather, True), "broadcast": (broadcast, False),
               "reduce": (reduce, True), "scatter": (scatter, False),
               "all_to_all": (all_to_all, False), "send_recv": (send_recv, False),
               "reduce_scatter_v": (reduce_scatter_v, True), "all_gather_v": (all_gather_v, False)}
REDUCING = {"all_reduce", "reduce_scatter", "reduce", "reduce_scatter_v"}
BLOCKED = {"reduce_scatter", "all_gather", "scatter", "all_to_all",     # buffers of n * SIZE
           "reduce_scatter_v", "all_gather_v"}                          # (of about that)


def sync():
    pyhccl.current_stream().synchronize()


def check(buf, expect, dtype, what=""):
    """Problems if `buf` does not hold exactly `expect` (compared bit for bit)."""
    got, want = raw(buf).view(np.uint8), encode(expect, dtype).view(np.uint8)
    if np.array_equal(got, want):
        return []
    if got.size != want.size:
        return [f"{what}wrong size: {got.size} bytes, expected {want.size}"]
    item = want.size // max(expect.size, 1)
    bad = np.flatnonzero((got != want).reshape(-1, item).any(axis=1))
    first = decode(raw(buf), dtype)[bad[0]]
    return [f"{what}wrong result ({len(bad)} of {expect.size} elements), first at [{bad[0]}]: "
            f"got {first} expected {expect[bad[0]]}"]


def unchanged(buf, v, dtype, what="sendbuf changed"):
    return [] if not check(buf, v, dtype) else [what]


def digest(buf):
    return hashlib.sha1(raw(buf).tobytes()).hexdigest()


def cases(big):
    """Every rank builds the same list, in the same order. Large counts (~1 and ~3 MiB in
    all, odd) run for two dtypes per collective, rotating, in half of the buffer kinds."""
    for c, (name, (_, has_inplace)) in enumerate(COLLECTIVES.items()):
        combos = [(k, ip) for k in KINDS for ip in ((False, True) if has_inplace else (False,))]
        for d, dtype in enumerate(DTYPES):
            item = 2 if dtype in ("float16", "bfloat16") else np.dtype(dtype).itemsize
            sizes = list(dict.fromkeys([0, 1, 7, 3 * SIZE + 1]))
            if big and d in (c % len(DTYPES), (c + 2) % len(DTYPES)):
                blocks = SIZE if name in BLOCKED else 1
                sizes += [(mib << 20) // item // blocks + 2 * mib + 1 for mib in (1, 3)]
            for s, n in enumerate(sizes):
                root = (s + d) % SIZE
                for kind, inplace in (combos if n <= 1000 else combos[s % 2::2]):
                    yield name, dtype, n, kind, inplace, "sum", root
                if name in REDUCING and n == 7:
                    for op in ("prod", "max", "min"):
                        yield name, dtype, n, "device", not name.startswith("reduce_scatter"), op, SIZE - 1


def expected_hosts():
    """Ranks grouped by hostname, hosts in order of their first rank."""
    names = WORLD.allgather(socket.gethostname())
    hosts = {}
    for r, h in enumerate(names):
        hosts.setdefault(h, []).append(r)
    return list(hosts.values())


def check_topology(comm):
    """Comm.topology (issue 5, section 2) against the hostnames, once pyhccl has it.

    Expects the ranks of each host under "hosts" (a key or an attribute); adapt here to
    the final shape of Comm.topology."""
    if not hasattr(type(comm), "topology"):
        return []
    want = expected_hosts()              # collective: every rank has the same pyhccl
    try:
        topo = comm.topology
        hosts = topo["hosts"] if isinstance(topo, dict) else getattr(topo, "hosts")
        got = [sorted(int(r) for r in h) for h in hosts]
    except Exception as exc:
        return [f"Comm.topology: unreadable as ranks per host ({one_line(exc)})"]
    return [] if sorted(got) == sorted(want) else [f"Comm.topology hosts {got}, expected {want}"]


def only_arg():
    """(collective, algorithm) from --only NAME=ALGO, else None."""
    if "--only" not in sys.argv:
        return None
    name, _, algo = sys.argv[sys.argv.index("--only") + 1].partition("=")
    return name, algo


def main():
    big = "--big" in sys.argv
    only = only_arg()
    t0 = time.monotonic()
    try:
        comm = comm_from_mpi(WORLD)
    except Exception as exc:   # every rank reports its own failure
        say(f"RESULT rank={RANK} error=communicator set-up: {one_line(exc)}")
        return 1
    failures, digests = check_topology(comm), []
    todo = [c for c in cases(big) if only is None or c[0] == only[0]]
    for case in todo:
        name, dtype, n, kind, inplace, op, root = case
        desc = f"{name} {dtype} n={n} {kind} {'in place' if inplace else 'out of place'} {op} root={root}"
        try:
            problems, dig = COLLECTIVES[name][0](comm, dtype, n, kind, inplace, op, root)
        except Exception as exc:     # the communicator may be unusable now: stop here
            failures.append(f"{desc}: raised {one_line(exc)}")
            break
        failures += [f"{desc}: {p}" for p in problems]
        if only is not None and n > 0:
            ran = comm.flight_record()[-1]["algorithm"]
            if ran != only[1]:
                failures.append(f"{desc}: ran {ran}, not {only[1]}")
        digests.append((desc, dig))
    else:
        if RANK == 0:
            time.sleep(0.3)
        entered = time.time()
        comm.barrier()
        sync()
        times = WORLD.allgather((entered, time.time()))
        if min(done for _, done in times) < max(enter for enter, _ in times):
            failures.append(f"barrier: a rank left before the last one entered {times}")
        everyone = WORLD.allgather(digests)
        for i, (desc, dig) in enumerate(digests):
            if dig is not None and len({d[i][1] for d in everyone}) != 1:
                failures.append(f"{desc}: result differs between ranks")
    for line in failures[:20]:
        say(f"FAIL rank={RANK} case={line}")
    if failures:
        say(f"RESULT rank={RANK} error={len(failures)} failure(s); first: {failures[0]}")
        return 1
    comm.destroy()
    say(f"RESULT rank={RANK} ok cases={len(todo)} host={socket.gethostname()} "
        f"seconds={time.monotonic() - t0:.1f}")
    return 0


def one_line(exc):
    return f"{type(exc).__name__}: {exc}".replace("\n", " | ")


if __name__ == "__main__":
    sys.exit(main())
