"""The attacker of test_replayed_hello_while_ranks_join: run on the root's simulated host,
it captures (AF_PACKET on the host's link) the first bootstrap hello that reaches the
rendezvous from another host, replays it to the rendezvous on a new connection and
reports what the root answered and whether any captured byte held the job secret.

    python tests/multihost/replay_hello.py DIR IFNAME

Waits for DIR/root (the root info); prints "LISTENING" once capturing, then one line
"REPLAY refused=<0|1> secret_seen=<0|1> answer=<text>". Needs CAP_NET_RAW (root)."""
import socket
import struct
import sys
import time

DIR, IFNAME = sys.argv[1], sys.argv[2]
HELLO_BYTES = 16 + 64          # bootstrap frame header + HelloPayload (wire.h)
TAG, HELLO, ERROR = 0x50484231, 1, 5


def root_info():
    deadline = time.monotonic() + 60
    while True:
        try:
            with open(f"{DIR}/root", "rb") as f:
                blob = f.read()
            if len(blob) >= 126:
                break
        except FileNotFoundError:
            pass
        if time.monotonic() > deadline:
            sys.exit("no root info")
        time.sleep(0.02)
    secret = blob[12:44]
    host = blob[60:124].split(b"\0")[0].decode()
    port = struct.unpack_from("<H", blob, 124)[0]
    return secret, host, port


def tcp_payload(frame):
    """(src port, dst port, payload) of an IPv4 TCP Ethernet frame, else None."""
    if len(frame) < 34 or frame[12:14] != b"\x08\x00" or frame[23] != 6:
        return None
    ip = frame[14:]
    ihl = (ip[0] & 15) * 4
    total = struct.unpack_from("!H", ip, 2)[0]
    tcp = ip[ihl:total]
    sport, dport = struct.unpack_from("!HH", tcp, 0)
    return sport, dport, tcp[(tcp[12] >> 4) * 4:]


def main():
    sniff = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.ntohs(0x0003))
    sniff.bind((IFNAME, 0))
    sniff.settimeout(1.0)
    print("LISTENING", flush=True)
    secret, host, port = root_info()
    seen, hello = b"", None
    deadline = time.monotonic() + 60
    while hello is None and time.monotonic() < deadline:
        try:
            got = tcp_payload(sniff.recv(65536))
        except socket.timeout:
            continue
        if got is None or port not in got[:2] or not got[2]:
            continue
        seen += got[2]
        data = got[2]
        if got[1] == port and len(data) >= HELLO_BYTES and struct.unpack_from("!II", data) == (TAG, HELLO):
            hello = data[:HELLO_BYTES]
    if hello is None:
        sys.exit("no hello captured")
    with socket.create_connection((host, port), timeout=10) as s:
        s.settimeout(10)
        s.sendall(hello)          # the challenge it sends first is ignored, as a replayer would
        answer = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            answer += chunk
    refused, text = False, ""
    off = 0
    while off + 16 <= len(answer):        # challenge, then the verdict
        tag, kind, length = struct.unpack_from("!IIQ", answer, off)
        if kind == ERROR:
            text = answer[off + 20:off + 16 + length].decode(errors="replace")
            refused = "wrong job secret" in text
        off += 16 + length
    print(f"REPLAY refused={int(refused)} secret_seen={int(secret in seen)} answer={text}", flush=True)


if __name__ == "__main__":
    main()
