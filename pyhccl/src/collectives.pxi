# The collectives of Comm (src/comm.pxi), in a base class that holds no state:
# each method hands `self`, a Comm, to one _Msg (src/msg.pxi), which resolves
# and checks the arguments, then enqueues the C call without the GIL from the
# message and keeps the Python buffers alive on the stream until the work
# completes. Text that several docstrings share is written once (src/docs.pxi).


cdef class _Collectives:
    """The collectives of a Comm (its base; a Comm is what they work on)."""

    # ---- collectives (arguments: src/msg.pxi; docstring slots: src/docs.pxi)

    def all_reduce(self, sendbuf, recvbuf=None, op=SUM, *, stream=None, dtype=None):
        """Reduce `sendbuf` over all ranks with `op` into `recvbuf` on every rank.

        {collective}
        In place when `recvbuf` is None or the same buffer as `sendbuf`. The
        buffers must have the same size and dtype. Element order does not
        matter, so any contiguous layout (C or Fortran order, a transposed
        view) is accepted; elements are paired by memory position, so both
        buffers, and every rank, must use the same layout. Calls HcclAllReduce.

        Args:
            sendbuf: input (DeviceArray or contiguous host array).
            recvbuf: output of the same size and dtype, or None (in place).
            {op}
            {stream}
            dtype: reinterpret both buffers as this DataType (e.g. BFLOAT16
                on uint16 arrays).

        Returns:
            The output buffer (recvbuf, or sendbuf when in place).

        {raises: HcclAllReduce}
        """
        cdef _Msg m = _msg(self).all_reduce(sendbuf, recvbuf, op, stream, dtype)
        with nogil:
            CHKHCCL(HcclAllReduce(m.sptr, m.rptr, m.count, m.dt, m.op, m.comm, m.stream),
                    "HcclAllReduce")
        return m.kept()

    def broadcast(self, buf, root=0, *, stream=None, dtype=None):
        """Copy `buf` of rank `root` into `buf` on every other rank.

        {collective: root}
        Always in place: `buf` is the input on the root and the output
        elsewhere (so it must be writable there). Any contiguous layout (C or
        Fortran order) is accepted; every rank must use the same one. Calls
        HcclBroadcast.

        Returns:
            buf.

        {raises: HcclBroadcast}
        """
        cdef _Msg m = _msg(self).broadcast(buf, root, stream, dtype)
        with nogil:
            CHKHCCL(HcclBroadcast(m.rptr, m.count, m.dt, m.root, m.comm, m.stream),
                    "HcclBroadcast")
        return m.kept()

    def all_gather(self, sendbuf, recvbuf, *, stream=None, dtype=None):
        """Gather `sendbuf` of every rank into `recvbuf` on every rank, in rank order.

        {collective}
        `recvbuf` holds size * len(sendbuf) elements; rank i's data lands at
        offset i * len(sendbuf). In place when `sendbuf` is exactly that slice
        of `recvbuf` on this rank. Calls HcclAllGather.

        Returns:
            recvbuf.

        {raises: HcclAllGather}
        """
        cdef _Msg m = _msg(self).all_gather(sendbuf, recvbuf, stream, dtype)
        with nogil:
            CHKHCCL(HcclAllGather(m.sptr, m.rptr, m.count, m.dt, m.comm, m.stream),
                    "HcclAllGather")
        return m.kept()

    def reduce_scatter(self, sendbuf, recvbuf, op=SUM, *, stream=None, dtype=None):
        """Reduce `sendbuf` over all ranks with `op` and scatter the result: rank i gets block i.

        {collective}
        `sendbuf` holds size * len(recvbuf) elements. In place when `recvbuf`
        is exactly this rank's block of `sendbuf`. Calls HcclReduceScatter.

        Returns:
            recvbuf.

        {raises: HcclReduceScatter}
        """
        cdef _Msg m = _msg(self).reduce_scatter(sendbuf, recvbuf, op, stream, dtype)
        with nogil:
            CHKHCCL(HcclReduceScatter(m.sptr, m.rptr, m.count, m.dt, m.op, m.comm, m.stream),
                    "HcclReduceScatter")
        return m.kept()

    def reduce(self, sendbuf, recvbuf=None, op=SUM, root=0, *, stream=None, dtype=None):
        """Reduce `sendbuf` over all ranks with `op` into `recvbuf` on rank `root`.

        {collective: root}
        In place when `recvbuf` is None or `sendbuf`. `recvbuf` is only
        written on the root. Like all_reduce(), any contiguous layout is
        accepted (the same on both buffers and every rank). Calls HcclReduce.

        Returns:
            The output buffer (recvbuf, or sendbuf when in place).

        {raises: HcclReduce}
        """
        cdef _Msg m = _msg(self).reduce(sendbuf, recvbuf, op, root, stream, dtype)
        with nogil:
            CHKHCCL(HcclReduce(m.sptr, m.rptr, m.count, m.dt, m.op, m.root, m.comm, m.stream),
                    "HcclReduce")
        return m.kept()

    def scatter(self, sendbuf, recvbuf, root=0, *, stream=None, dtype=None):
        """Split `sendbuf` of rank `root` into size blocks; rank i receives block i in `recvbuf`.

        {collective: root}
        `sendbuf` (size * len(recvbuf) elements) is read on the root only;
        other ranks may pass None. Calls HcclScatter.

        Returns:
            recvbuf.

        {raises: HcclScatter}
        """
        cdef _Msg m = _msg(self).scatter(sendbuf, recvbuf, root, stream, dtype)
        with nogil:
            CHKHCCL(HcclScatter(m.sptr, m.rptr, m.count, m.dt, m.root, m.comm, m.stream),
                    "HcclScatter")
        return m.kept()

    def gather(self, sendbuf, recvbuf=None, root=0, *, stream=None, dtype=None):
        """Gather `sendbuf` of every rank into `recvbuf` on rank `root`, in rank order.

        {collective: root}
        The mirror image of scatter(): `recvbuf` (size * len(sendbuf)
        elements; rank i's data at offset i * len(sendbuf)) is written on the
        root only; other ranks may pass None. In place when `sendbuf` is
        exactly the root's slice of `recvbuf`. Calls PyhcclGather (a pyhccl
        extension: CANN's HCCL has no Gather).

        Returns:
            recvbuf (None on a rank that passed None).

        {raises: PyhcclGather}
        """
        cdef _Msg m = _msg(self).gather(sendbuf, recvbuf, root, stream, dtype)
        with nogil:
            CHKHCCL(PyhcclGather(m.sptr, m.rptr, m.count, m.dt, m.root, m.comm, m.stream),
                    "PyhcclGather")
        return m.kept()

    def all_to_all(self, sendbuf, recvbuf, *, stream=None, dtype=None):
        """Send block j of `sendbuf` to rank j; receive rank i's block into block i of `recvbuf`.

        {collective}
        Both buffers hold size equal blocks; not in place. Calls HcclAlltoAll.

        Returns:
            recvbuf.

        {raises: HcclAlltoAll}
        """
        cdef _Msg m = _msg(self).all_to_all(sendbuf, recvbuf, stream, dtype)
        with nogil:
            CHKHCCL(HcclAlltoAll(m.sptr, m.count, m.dt, m.rptr, m.count, m.rdt, m.comm,
                                 m.stream), "HcclAlltoAll")
        return m.kept()

    def send(self, buf, peer, *, stream=None, dtype=None):
        """Send `buf` to rank `peer`, which calls recv() with as many elements.

        Point to point, asynchronous: it enqueues the send on `stream` (None:
        the current stream) and returns; `buf` must not change until the
        stream has run it. Calls HcclSend.

        Pairing rules:

        - Sends from rank A to rank B match B's receives from A in order:
          the first send with the first receive, and so on (per
          communicator).
        - A send and its receive must have the same count and dtype; a
          mismatch fails the operation (HCCL_E_PARA at the receiver,
          reported by synchronize()).
        - A send completes when its receiver has taken the data, except
          for what fits in the pair's channel (PYHCCL_SLOTS x
          PYHCCL_SLOT_BYTES, 1 MiB by default on one host, up to 2 MiB in
          a communicator across hosts; the socket buffers between hosts):
          a message up to that size may complete
          before the receive is posted, a larger one waits for it. Later
          operations of the communicator (this rank's receives included)
          wait for the send. If the receiver runs something else instead
          (a collective), the send still succeeded here: the mismatch fails
          the receiver's operation, and this rank's destroy() raises
          HcclError ("rank N never received this rank's last message(s)")
          on one host (PYHCCL_LINGER_MS).
        - So a ring, or any cycle, of blocking sends (every rank sends to
          the next, then receives from the previous) never completes with
          large messages: post its sends and receives together, inside
          ``with pyhccl.group():`` or as one batch_send_recv(). On one host
          such a deadlock is detected: synchronize() raises HcclError
          ("deadlock: ranks 0 -> 1 -> ... each wait in a blocking send")
          on every rank of the cycle within a second; between hosts it
          waits for HCCL_EXEC_TIMEOUT, and the timeout's message names
          group().

        Returns:
            buf.

        {raises: HcclSend}
        """
        cdef _Msg m = _msg(self).send(buf, peer, stream, dtype)
        with nogil:
            CHKHCCL(HcclSend(m.sptr, m.count, m.dt, m.root, m.comm, m.stream), "HcclSend")
        return m.kept()

    def recv(self, buf, peer, *, stream=None, dtype=None):
        """Receive into `buf` from rank `peer`, which calls send() with as many elements.

        Point to point, asynchronous: it enqueues the receive on `stream`
        (None: the current stream) and returns; synchronise the stream before
        reading `buf`. The pairing rules of send() apply: receives match the
        peer's sends in order, with the same count and dtype; a receive
        completes when the data has arrived. A receive posted after a send
        on this rank runs only once that send completed, so a ring (or any
        cycle) of send-then-recv with messages larger than the channel
        (1 MiB by default) is a deadlock: post it inside
        ``with pyhccl.group():`` (or as one batch_send_recv()). Calls
        HcclRecv.

        Returns:
            buf.

        {raises: HcclRecv}
        """
        cdef _Msg m = _msg(self).recv(buf, peer, stream, dtype)
        with nogil:
            CHKHCCL(HcclRecv(m.rptr, m.count, m.dt, m.root, m.comm, m.stream), "HcclRecv")
        return m.kept()

    def barrier(self, *, stream=None):
        """Block the stream until every rank has reached the barrier.

        Collective: every rank calls it, in the same order. Asynchronous: it
        enqueues the barrier on `stream` (None: the current stream) and
        returns; synchronise the stream to wait for it. Calls HcclBarrier.

        Raises:
            TypeError: `stream` is not a Stream.
            ValueError: the communicator or the stream is destroyed, or the
                stream is on another device.
            HcclError: HcclBarrier refused the call.
        """
        cdef _Msg m = _msg(self).barrier(stream)
        with nogil:
            CHKHCCL(HcclBarrier(m.comm, m.stream), "HcclBarrier")

    def all_gather_v(self, sendbuf, recvbuf, recv_counts, recv_displs=None, *, stream=None,
                     dtype=None):
        """Gather blocks of different sizes: rank i's `sendbuf` lands at recv_displs[i] in `recvbuf`.

        {collective: recv_counts and recv_displs}
        In place when `sendbuf` is exactly this rank's block of `recvbuf`.
        Calls HcclAllGatherV.

        Args:
            sendbuf: this rank's block, recv_counts[rank] elements.
            recvbuf: output holding every block (writable).
            recv_counts: elements from each rank (a sequence or numpy array
                of size ints).
            recv_displs: where each rank's block starts in recvbuf, in
                elements; None packs the blocks in rank order. The blocks
                must not overlap and must fit in recvbuf.
            {stream}
            {dtype}

        Returns:
            recvbuf.

        {raises: HcclAllGatherV}
        """
        cdef _Msg m = _msg(self).all_gather_v(sendbuf, recvbuf, recv_counts, recv_displs,
                                              stream, dtype)
        with nogil:
            CHKHCCL(HcclAllGatherV(m.sptr, m.count, m.rptr, m.rcounts, m.rdispls, m.dt,
                                   m.comm, m.stream), "HcclAllGatherV")
        return m.kept()

    def reduce_scatter_v(self, sendbuf, recvbuf, send_counts, send_displs=None, op=SUM, *,
                         stream=None, dtype=None):
        """Reduce `sendbuf` over all ranks with `op`; rank i gets the block of send_counts[i] at send_displs[i].

        {collective: send_counts and send_displs}
        In place when `recvbuf` is exactly this rank's block of `sendbuf`.
        Calls HcclReduceScatterV.

        Args:
            sendbuf: input holding every rank's block.
            recvbuf: output, send_counts[rank] elements (writable).
            send_counts: elements of each rank's block (size ints).
            send_displs: where each block starts in sendbuf, in elements;
                None packs them in rank order. Blocks must fit in sendbuf.
            {op}
            {stream}
            {dtype}

        Returns:
            recvbuf.

        {raises: HcclReduceScatterV}
        """
        cdef _Msg m = _msg(self).reduce_scatter_v(sendbuf, recvbuf, send_counts, send_displs,
                                                  op, stream, dtype)
        with nogil:
            CHKHCCL(HcclReduceScatterV(m.sptr, m.scounts, m.sdispls, m.rptr, m.count, m.dt,
                                       m.op, m.comm, m.stream), "HcclReduceScatterV")
        return m.kept()

    def all_to_all_v(self, sendbuf, recvbuf, send_counts, recv_counts, send_displs=None,
                     recv_displs=None, *, stream=None, dtype=None):
        """Send send_counts[j] elements to each rank j; receive recv_counts[i] from each rank i.

        {collective}
        send_counts[j] on rank i must equal recv_counts[i] on rank j (a
        mismatch fails the operation, reported by synchronize()). Not in
        place. Calls HcclAlltoAllV.

        Args:
            sendbuf: input; the block for rank j starts at send_displs[j].
            recvbuf: output; the block from rank i lands at recv_displs[i]
                (blocks must not overlap).
            send_counts, recv_counts: elements per peer (size ints each).
            send_displs, recv_displs: block offsets in elements; None packs
                the blocks in rank order.
            {stream}
            {dtype}

        Returns:
            recvbuf.

        {raises: HcclAlltoAllV}
        """
        cdef _Msg m = _msg(self).all_to_all_v(sendbuf, recvbuf, send_counts, recv_counts,
                                              send_displs, recv_displs, stream, dtype)
        with nogil:
            CHKHCCL(HcclAlltoAllV(m.sptr, m.scounts, m.sdispls, m.dt, m.rptr, m.rcounts,
                                  m.rdispls, m.rdt, m.comm, m.stream), "HcclAlltoAllV")
        return m.kept()

    def all_to_all_vc(self, sendbuf, recvbuf, send_count_matrix, *, stream=None, dtype=None):
        """All-to-all from a matrix of counts: rank i sends matrix[i][j] elements to rank j.

        {collective: matrix}
        Blocks are packed in rank order in both buffers: this rank sends row
        `rank` and receives column `rank`. Not in place. Calls HcclAlltoAllVC.

        Args:
            sendbuf: input, at least sum(matrix[rank]) elements.
            recvbuf: output, at least sum of column `rank` elements.
            send_count_matrix: size x size ints (nested sequences, a 2-d
                array, or a flat sequence of size * size), row = sender.
            {stream}
            {dtype}

        Returns:
            recvbuf.

        {raises: HcclAlltoAllVC}
        """
        cdef _Msg m = _msg(self).all_to_all_vc(sendbuf, recvbuf, send_count_matrix, stream,
                                               dtype)
        with nogil:
            CHKHCCL(HcclAlltoAllVC(m.sptr, m.scounts, m.dt, m.rptr, m.rdt, m.comm, m.stream),
                    "HcclAlltoAllVC")
        return m.kept()

    def batch_send_recv(self, items, *, stream=None, dtype=None):
        """Run a batch of sends and receives that progress together (HcclBatchSendRecv).

        Point to point, asynchronous: it enqueues the whole batch on `stream`
        (None: the current stream) and returns; synchronise the stream before
        reading the received buffers. All items progress together, so a ring
        or any pattern of exchanges cannot deadlock inside one batch. Items
        between a pair of ranks match in order (as send() and recv() do),
        with equal counts and dtypes; sending to this rank itself works when the
        matching receive is in the same batch.

        Args:
            items: iterable of (kind, buf, peer) tuples; kind is "send" or
                "recv", peer the other rank. A received-into buffer must not
                overlap any other buffer of the batch.
            {stream}
            dtype: reinterpret every buffer as this DataType.

        {raises: HcclBatchSendRecv}
        """
        cdef _Msg m = _msg(self).batch_send_recv(items, stream, dtype)
        with nogil:
            CHKHCCL(HcclBatchSendRecv(m.items, m.nitems, m.comm, m.stream), "HcclBatchSendRecv")
        m.kept()


_fill_docs(_Collectives, "Comm")
