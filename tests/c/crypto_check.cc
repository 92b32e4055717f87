// csrc/common's SHA-256 against FIPS 180-2's test vectors (fed in pieces of
// every size) and HMAC-SHA256 against RFC 4231's test cases 1-7 (case 5:
// the first 128 bits), fed whole and a byte at a time; equal_ct. Prints
// "crypto ok". Built by tests/c/test_c_abi.py:
//   g++ -std=c++17 -Icsrc tests/c/crypto_check.cc csrc/common/sha256.cc csrc/common/hmac.cc
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "common/hmac.h"
#include "common/sha256.h"

#include "unit_check.h"

namespace {

std::string hex(const uint8_t *d, size_t n) {
  static const char k[] = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s.push_back(k[d[i] >> 4]);
    s.push_back(k[d[i] & 15]);
  }
  return s;
}

// The digest of `msg`, fed `piece` bytes at a time.
std::string sha(const std::string &msg, size_t piece) {
  hccl::Sha256 h;
  for (size_t off = 0; off < msg.size(); off += piece)
    h.update(msg.data() + off, std::min(piece, msg.size() - off));
  uint8_t d[32];
  h.finish(d);
  return hex(d, 32);
}

void check_sha256() {
  struct {
    std::string msg;
    const char *want;
  } kat[] = {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {std::string(1000000, 'a'), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
  };
  for (const auto &k : kat)
    for (size_t piece : {1u, 3u, 55u, 56u, 63u, 64u, 65u, 1000u, 1000000u}) {
      std::string got = sha(k.msg, piece);
      EXPECT(got == k.want, "SHA-256 of %zu bytes in pieces of %zu: %s, want %s", k.msg.size(),
             piece, got.c_str(), k.want);
    }
}

void check_hmac() {
  const std::string aa131(131, '\xaa');
  std::string key4;
  for (int i = 1; i <= 25; ++i) key4.push_back(static_cast<char>(i));
  struct {
    std::string key, data;
    const char *want;  // case 5 is truncated to 128 bits
  } rfc4231[] = {
      {std::string(20, '\x0b'), "Hi There", "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
      {"Jefe", "what do ya want for nothing?", "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
      {std::string(20, '\xaa'), std::string(50, '\xdd'),
       "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
      {key4, std::string(50, '\xcd'), "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
      {std::string(20, '\x0c'), "Test With Truncation", "a3b6167473100ee06e0c796c2955552b"},
      {aa131, "Test Using Larger Than Block-Size Key - Hash Key First",
       "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
      {aa131,
       "This is a test using a larger than block-size key and a larger than block-size data. The key "
       "needs to be hashed before being used by the HMAC algorithm.",
       "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
  };
  int n = 0;
  for (const auto &c : rfc4231) {
    ++n;
    for (size_t piece : {c.data.size(), size_t{1}}) {
      hccl::HmacSha256 h(c.key.data(), c.key.size());
      for (size_t off = 0; off < c.data.size(); off += piece)
        h.update(c.data.data() + off, std::min(piece, c.data.size() - off));
      uint8_t mac[32];
      h.finish(mac);
      std::string got = hex(mac, std::strlen(c.want) / 2);
      EXPECT(got == c.want, "HMAC-SHA256 RFC 4231 case %d (pieces of %zu): %s, want %s", n, piece, got.c_str(),
             c.want);
    }
  }
  // u32 hashes the big-endian bytes.
  uint8_t a[32], b[32];
  hccl::HmacSha256("k", 1).u32(0x01020304).finish(a);
  const uint8_t be[4] = {1, 2, 3, 4};
  hccl::HmacSha256("k", 1).update(be, 4).finish(b);
  EXPECT(std::memcmp(a, b, 32) == 0, "u32 does not hash network byte order");
}

void check_equal_ct() {
  uint8_t x[32] = {}, y[32] = {};
  EXPECT(hccl::equal_ct(x, y, 32), "equal buffers compare unequal");
  for (int i : {0, 17, 31}) {
    y[i] = 0x80;
    EXPECT(!hccl::equal_ct(x, y, 32), "buffers differing at byte %d compare equal", i);
    y[i] = 0;
  }
}

}  // namespace

int main() {
  check_sha256();
  check_hmac();
  check_equal_ct();
  if (g_fail != 0) return 1;
  std::printf("crypto ok\n");
  return 0;
}
