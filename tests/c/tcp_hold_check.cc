// The TCP connection's held messages (Transfer::lazy, csrc/hccl/transport/tcp/conn.cc)
// on their own: two TcpConnections over socket pairs, one sending, one receiving,
// without the engine. A lazy header-only send completes at once and nothing reaches
// the wire until flush(), a message posted after it, or kHeldMsgs of them on one
// socket; then the receiver takes them, in order, each checked against what it
// expects (signature, CRC trailer). A lazy header behind a message still going out
// is not held; clear() drops what is held. Small lazy data sends are held too, with
// a copy of their payload, once all of it is ready, also behind other messages
// (until then they wait, without asking poll() for POLLOUT), up to kHeldBytes on a
// socket; larger ones go as any message. A message's header waits for its payload unless
// flushed. Prints "tcp hold ok". Built by tests/c/test_c_tcp.py.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <vector>

#include "hccl/reduce/reduce.h"
#include "hccl/transport/tcp/conn.h"

#include "hostrt_stub.h"
#include "unit_check.h"

// No reduction here: a stand-in for csrc/hccl/reduce that the connections never call.
void hccl::reduce(HcclDataType, HcclReduceOp, void *, const void *const *, int, size_t) { std::abort(); }

namespace {

using hccl::OpSig;
using hccl::Transfer;
using hccl::WaitError;
using hccl::tcp::TcpConnection;

constexpr int kSocks = 2;
constexpr int kHeld = TcpConnection::kHeldMsgs;
constexpr size_t kHeldPayload = TcpConnection::kHeldPayload, kHeldBytes = TcpConnection::kHeldBytes;

// Rank 0's connection to rank 1 and rank 1's to rank 0, over socket pairs.
struct Pair {
  std::unique_ptr<TcpConnection> tx, rx;
  std::vector<int> rx_fds;  // rank 1's data sockets, to look for bytes on the wire
};

Pair make_pair() {
  Pair p;
  int ctrl[2];
  socketpair(AF_UNIX, SOCK_STREAM, 0, ctrl);
  std::vector<int> a, b;
  for (int i = 0; i < kSocks; ++i) {
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    a.push_back(sv[0]);
    b.push_back(sv[1]);
  }
  p.rx_fds = b;
  p.tx.reset(new TcpConnection(1, "rank 1 at test", ctrl[0], a, 1 << 16));
  p.rx.reset(new TcpConnection(0, "rank 0 at test", ctrl[1], b, 1 << 16));
  return p;
}

bool on_wire(const Pair &p) {
  std::vector<pollfd> fds;
  for (int fd : p.rx_fds) fds.push_back({fd, POLLIN, 0});
  return poll(fds.data(), fds.size(), 0) > 0;
}

// Whether the connection asks poll() to wake it when a socket can take more.
bool wants_out(TcpConnection &c) {
  std::vector<pollfd> fds;
  c.poll_fds(&fds);
  for (const pollfd &f : fds)
    if (f.events & POLLOUT) return true;
  return false;
}

OpSig sig_of(uint64_t seq) {
  OpSig s;
  s.seq = seq;
  s.kind = 5;
  s.count = 8;
  return s;
}

Transfer header(Transfer::Kind kind, int peer, uint64_t seq, bool lazy) {
  Transfer t;
  t.kind = kind;
  t.peer = peer;
  t.sig = sig_of(seq);
  t.lazy = lazy;
  return t;
}

// Progresses both sides until every transfer in `wait` completed (or a bounded number of
// rounds passed); false on an error or when they did not.
bool run(Pair &p, const std::vector<Transfer *> &wait, WaitError *err) {
  for (int round = 0; round < 100000; ++round) {
    bool moved = false;
    if (p.tx->progress(&moved, err) != HCCL_SUCCESS || p.rx->progress(&moved, err) != HCCL_SUCCESS)
      return false;
    bool all = true;
    for (const Transfer *t : wait) all = all && t->complete;
    if (all) return true;
    if (!moved) usleep(100);
  }
  return false;
}

// Rank 1 receives headers first..last (header-only), in order.
bool receive_headers(Pair &p, uint64_t first, uint64_t last, WaitError *err) {
  std::deque<Transfer> recvs;
  std::vector<Transfer *> wait;
  for (uint64_t s = first; s <= last; ++s) {
    recvs.push_back(header(Transfer::kRecv, 0, s, false));
    p.rx->post(&recvs.back());
    wait.push_back(&recvs.back());
  }
  return run(p, wait, err);
}

// Rank 0 posts lazy header-only sends of collectives first..last.
void post_lazy(Pair &p, std::deque<Transfer> *sends, uint64_t first, uint64_t last) {
  for (uint64_t s = first; s <= last; ++s) {
    sends->push_back(header(Transfer::kSend, 1, s, true));
    p.tx->post(&sends->back());
  }
}

void held_until_flush() {
  Pair p = make_pair();
  std::deque<Transfer> sends;
  post_lazy(p, &sends, 1, 5);
  for (const Transfer &t : sends)
    EXPECT(t.complete, "lazy send %llu did not complete at once", (unsigned long long)t.sig.seq);
  EXPECT(p.tx->holds(), "five lazy headers: nothing held");
  bool moved = false;
  WaitError err;
  p.tx->progress(&moved, &err);  // progress alone does not send them
  EXPECT(!on_wire(p), "held headers went out before a flush");
  p.tx->flush();
  EXPECT(!p.tx->holds(), "still held after flush()");
  EXPECT(on_wire(p), "flush() sent nothing");
  EXPECT(receive_headers(p, 1, 5, &err), "headers 1-5 after a flush: %s", err.what.c_str());
}

void taken_along_by_a_message() {
  Pair p = make_pair();
  std::deque<Transfer> sends;
  post_lazy(p, &sends, 1, 3);
  EXPECT(!on_wire(p), "three held headers on the wire");
  // A message of collective 4: the receiver takes the held ones first, on their sockets.
  std::vector<float> data(1000), got(1000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i) * 0.5f;
  Transfer msg = header(Transfer::kSend, 1, 4, false);
  msg.src = reinterpret_cast<const char *>(data.data());
  msg.bytes = data.size() * sizeof(float);
  p.tx->post(&msg);
  EXPECT(!msg.complete, "a message completed at post");
  WaitError err;
  std::deque<Transfer> recvs;
  std::vector<Transfer *> wait{&msg};
  for (uint64_t s = 1; s <= 3; ++s) {
    recvs.push_back(header(Transfer::kRecv, 0, s, false));
    p.rx->post(&recvs.back());
    wait.push_back(&recvs.back());
  }
  Transfer in = header(Transfer::kRecv, 0, 4, false);
  in.dst = reinterpret_cast<char *>(got.data());
  in.bytes = got.size() * sizeof(float);
  p.rx->post(&in);
  wait.push_back(&in);
  EXPECT(run(p, wait, &err), "headers and message: %s", err.what.c_str());
  EXPECT(got == data, "the message's payload differs");
  EXPECT(!p.tx->holds(), "held after the message went");
}

void sent_at_the_limit() {
  Pair p = make_pair();
  std::deque<Transfer> sends;
  // Message i goes on socket i % kSocks: kHeld on socket 0 is the 2 kHeld - 1st.
  post_lazy(p, &sends, 1, 2 * kHeld - 2);
  EXPECT(!on_wire(p), "%d held headers on the wire", 2 * kHeld - 2);
  post_lazy(p, &sends, 2 * kHeld - 1, 2 * kHeld - 1);
  EXPECT(on_wire(p), "%d headers on one socket did not go out", kHeld);
  EXPECT(p.tx->holds(), "the other socket's headers went out too");
  p.tx->flush();
  WaitError err;
  EXPECT(receive_headers(p, 1, 2 * kHeld - 1, &err), "headers after the limit: %s", err.what.c_str());
}

void not_held_behind_a_message() {
  Pair p = make_pair();
  // A message larger than the socket pair holds stays in its socket's queue.
  std::vector<char> big(8 << 20, 7), got(big.size());
  Transfer msg = header(Transfer::kSend, 1, 1, false);
  msg.src = big.data();
  msg.bytes = big.size();
  p.tx->post(&msg);
  bool moved = false;
  WaitError err;
  p.tx->progress(&moved, &err);
  Transfer other = header(Transfer::kSend, 1, 2, true);  // socket 1: held
  p.tx->post(&other);
  Transfer behind = header(Transfer::kSend, 1, 3, true);  // socket 0, behind the message
  p.tx->post(&behind);
  EXPECT(other.complete, "a lazy header on an idle socket was not held");
  EXPECT(!behind.complete, "a lazy header behind a message in flight was held");
  std::deque<Transfer> recvs;
  recvs.push_back(header(Transfer::kRecv, 0, 1, false));
  recvs.back().dst = got.data();
  recvs.back().bytes = got.size();
  recvs.push_back(header(Transfer::kRecv, 0, 2, false));
  recvs.push_back(header(Transfer::kRecv, 0, 3, false));
  std::vector<Transfer *> wait{&msg, &behind};
  for (Transfer &t : recvs) {
    p.rx->post(&t);
    wait.push_back(&t);
  }
  EXPECT(run(p, wait, &err), "message and headers: %s", err.what.c_str());
  EXPECT(got == big, "the message's payload differs");
}

// A lazy data send of `bytes` from `src`, of collective `seq`.
Transfer lazy_data(uint64_t seq, const std::vector<char> &src) {
  Transfer t = header(Transfer::kSend, 1, seq, true);
  t.src = src.data();
  t.bytes = src.size();
  return t;
}

// Small lazy data sends complete at once with their payload copied: changing the
// source afterwards changes nothing received. They go out at flush_held().
void small_data_held() {
  Pair p = make_pair();
  std::deque<std::vector<char>> data;
  std::deque<Transfer> sends;
  for (uint64_t s = 1; s <= 5; ++s) {
    data.emplace_back(s * 100, static_cast<char>(s));
    sends.push_back(lazy_data(s, data.back()));
    p.tx->post(&sends.back());
    EXPECT(sends.back().complete, "a lazy %llu-byte send did not complete at once",
           (unsigned long long)(s * 100));
  }
  EXPECT(p.tx->holds_data(), "five small lazy sends: no data held");
  std::deque<std::vector<char>> want = data;
  for (auto &d : data) d.assign(d.size(), 'x');  // the caller reuses its buffers
  bool moved = false;
  WaitError err;
  p.tx->progress(&moved, &err);
  EXPECT(!on_wire(p), "held data went out before a flush");
  p.tx->flush_held();
  EXPECT(!p.tx->holds() && !p.tx->holds_data(), "still held after flush_held()");
  std::deque<std::vector<char>> got;
  std::deque<Transfer> recvs;
  std::vector<Transfer *> wait;
  for (uint64_t s = 1; s <= 5; ++s) {
    got.emplace_back(s * 100, 0);
    recvs.push_back(header(Transfer::kRecv, 0, s, false));
    recvs.back().dst = got.back().data();
    recvs.back().bytes = got.back().size();
    p.rx->post(&recvs.back());
    wait.push_back(&recvs.back());
  }
  EXPECT(run(p, wait, &err), "held data after a flush: %s", err.what.c_str());
  EXPECT(got == want, "held payloads arrived changed");
}

// A small lazy send whose data is still being produced waits for it (no POLLOUT),
// then is held; one larger than kHeldPayload goes out as any message, taking the
// held ones along.
void data_held_when_ready() {
  Pair p = make_pair();
  std::vector<char> small(kHeldPayload, 's'), large(kHeldPayload + 64, 'l');
  Transfer producer;  // stands for the step that computes the small payload
  producer.bytes = small.size();
  hccl::Region region;
  region.add(&producer);
  Transfer first = lazy_data(1, small);
  first.dep = &region;
  p.tx->post(&first);
  bool moved = false;
  WaitError err;
  p.tx->progress(&moved, &err);
  EXPECT(!first.complete, "a lazy send completed before its data was ready");
  EXPECT(!wants_out(*p.tx), "a lazy send waiting for its data asks for POLLOUT");
  producer.done = producer.bytes;
  producer.complete = true;
  p.tx->progress(&moved, &err);
  EXPECT(first.complete && p.tx->holds_data(), "a lazy send was not held once its data was ready");
  EXPECT(!on_wire(p), "held data on the wire");
  Transfer second = lazy_data(2, large);  // socket 1
  Transfer third = lazy_data(3, large);   // socket 0, behind nothing: the held one goes first
  p.tx->post(&second);
  p.tx->post(&third);
  EXPECT(!second.complete && !third.complete, "a lazy send above kHeldPayload was held");
  std::vector<char> got1(small.size()), got2(large.size()), got3(large.size());
  std::deque<Transfer> recvs;
  std::vector<char> *dsts[] = {&got1, &got2, &got3};
  std::vector<Transfer *> wait{&second, &third};
  for (uint64_t s = 1; s <= 3; ++s) {
    recvs.push_back(header(Transfer::kRecv, 0, s, false));
    recvs.back().dst = dsts[s - 1]->data();
    recvs.back().bytes = dsts[s - 1]->size();
    p.rx->post(&recvs.back());
    wait.push_back(&recvs.back());
  }
  EXPECT(run(p, wait, &err), "held and larger messages: %s", err.what.c_str());
  EXPECT(got1 == small && got2 == large && got3 == large, "the payloads differ");
}

// A small lazy data send behind a message still going out is held once that message
// went: complete, and on the wire only after flush_held().
void data_held_behind_a_message() {
  Pair p = make_pair();
  std::vector<char> big(8 << 20, 7), got(big.size()), small(100, 's'), got_small(100);
  Transfer msg = header(Transfer::kSend, 1, 1, false);  // socket 0
  msg.src = big.data();
  msg.bytes = big.size();
  p.tx->post(&msg);
  Transfer hdr = header(Transfer::kSend, 1, 2, true);  // socket 1: held
  p.tx->post(&hdr);
  Transfer data = lazy_data(3, small);  // socket 0, behind the message
  p.tx->post(&data);
  EXPECT(!data.complete, "a lazy send behind a message in flight completed at post");
  Transfer in = header(Transfer::kRecv, 0, 1, false);
  in.dst = got.data();
  in.bytes = got.size();
  p.rx->post(&in);
  WaitError err;
  EXPECT(run(p, {&msg, &in, &data}, &err), "the message: %s", err.what.c_str());
  EXPECT(got == big, "the message's payload differs");
  EXPECT(p.tx->holds_data(), "the lazy send behind the message was not held");
  p.tx->flush_held();
  Transfer in_hdr = header(Transfer::kRecv, 0, 2, false), in_small = header(Transfer::kRecv, 0, 3, false);
  in_small.dst = got_small.data();
  in_small.bytes = got_small.size();
  p.rx->post(&in_hdr);
  p.rx->post(&in_small);
  EXPECT(run(p, {&in_hdr, &in_small}, &err), "held after the message: %s", err.what.c_str());
  EXPECT(got_small == small, "the held payload differs");
}

// At most kHeldBytes wait on a socket: the send that reaches it sends them all.
void data_sent_at_the_byte_limit() {
  Pair p = make_pair();
  std::vector<char> block(kHeldPayload, 'b');
  const size_t per = sizeof(hccl::MsgHeader) + kHeldPayload + sizeof(uint32_t);
  const int fit = static_cast<int>((kHeldBytes + per - 1) / per);  // sends on socket 0 that reach it
  std::deque<Transfer> sends;
  for (int i = 1; i <= 2 * fit - 2; ++i) {
    sends.push_back(lazy_data(i, block));
    p.tx->post(&sends.back());
  }
  EXPECT(!on_wire(p), "%d held sends on the wire", 2 * fit - 2);
  sends.push_back(lazy_data(2 * fit - 1, block));
  p.tx->post(&sends.back());
  EXPECT(on_wire(p), "%zu held bytes on one socket did not go out", fit * per);
  p.tx->flush_held();
  std::deque<std::vector<char>> got;
  std::deque<Transfer> recvs;
  std::vector<Transfer *> wait;
  for (int i = 1; i <= 2 * fit - 1; ++i) {
    got.emplace_back(block.size(), 0);
    recvs.push_back(header(Transfer::kRecv, 0, i, false));
    recvs.back().dst = got.back().data();
    recvs.back().bytes = block.size();
    p.rx->post(&recvs.back());
    wait.push_back(&recvs.back());
  }
  WaitError err;
  EXPECT(run(p, wait, &err), "sends past the byte limit: %s", err.what.c_str());
  for (const auto &g : got) EXPECT(g == block, "a payload differs");
}


// A message's header waits for the first of its payload (TcpConnection::header_waits):
// nothing on the wire, and no POLLOUT to wake a sleeping engine, until the data is
// produced or flush() (the engine about to sleep) lets the header go alone.
void header_waits_for_payload(bool flushed) {
  Pair p = make_pair();
  std::vector<float> data(256), got(256);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i) + 0.25f;
  Transfer producer;  // stands for the step that computes the payload
  producer.bytes = data.size() * sizeof(float);
  hccl::Region region;
  region.add(&producer);
  Transfer msg = header(Transfer::kSend, 1, 1, false);
  msg.src = reinterpret_cast<const char *>(data.data());
  msg.bytes = producer.bytes;
  msg.dep = &region;
  p.tx->post(&msg);
  bool moved = false;
  WaitError err;
  p.tx->progress(&moved, &err);
  EXPECT(!on_wire(p), "a header went out before any of its payload was ready");
  EXPECT(!wants_out(*p.tx), "a header waiting for its payload asks for POLLOUT");
  if (flushed) {
    p.tx->flush();
    EXPECT(wants_out(*p.tx), "after flush() the waiting header does not ask to go");
    p.tx->progress(&moved, &err);
    EXPECT(on_wire(p), "after flush() the header stayed back");
  }
  producer.done = producer.bytes;
  producer.complete = true;
  Transfer in = header(Transfer::kRecv, 0, 1, false);
  in.dst = reinterpret_cast<char *>(got.data());
  in.bytes = got.size() * sizeof(float);
  p.rx->post(&in);
  EXPECT(run(p, {&msg, &in}, &err), "the message once its payload was ready: %s", err.what.c_str());
  EXPECT(got == data, "the message's payload differs");
}

void cleared() {
  Pair p = make_pair();
  Transfer t = header(Transfer::kSend, 1, 1, true);
  p.tx->post(&t);
  EXPECT(p.tx->holds(), "nothing held");
  p.tx->clear();
  EXPECT(!p.tx->holds(), "held after clear()");
  p.tx->flush();
  EXPECT(!on_wire(p), "a cleared header went out");
}

}  // namespace

int main() {
  held_until_flush();
  taken_along_by_a_message();
  sent_at_the_limit();
  not_held_behind_a_message();
  small_data_held();
  data_held_when_ready();
  data_held_behind_a_message();
  data_sent_at_the_byte_limit();
  header_waits_for_payload(false);
  header_waits_for_payload(true);
  cleared();
  if (g_fail != 0) {
    std::fprintf(stderr, "%d of %d checks failed\n", g_fail.load(), g_checks.load());
    return 1;
  }
  std::printf("tcp hold ok\n");
  return 0;
}
