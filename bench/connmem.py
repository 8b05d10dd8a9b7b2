#!/usr/bin/env python3
"""Resident memory of jobguard serve per open connection, by connection state.

usage: connmem.py PID PORT CA N
  PID/PORT: a running `jobguard serve` (nothing else connected); CA: its CA certificate.
  Opens N connections in each state in turn, waits for the server to settle, prints the growth
  of its VmRSS divided by N, and closes them:
    idle       TLS handshake done, no request;
    handshake  a ClientHello whose length field announces 16 MiB, sent up to what the server
               reads before a handshake is done (16 KiB);
    headers    TLS done, 15,000 bytes of request headers sent, the header block not ended
               (libmicrohttpd's 16 KiB pool nearly full).
"""
import socket
import ssl
import struct
import sys
import time

HOST = "jobguard.default.svc"


def rss(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def hello(n):
    body = b"\x01\xff\xff\xff\x03\x03" + bytes(n - 6)
    out = bytearray()
    for off in range(0, len(body), 16384):
        part = body[off:off + 16384]
        out += b"\x16\x03\x01" + struct.pack(">H", len(part)) + part
    return bytes(out)


def main():
    pid, port, ca, n = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    ctx = ssl.create_default_context(cafile=ca)
    head = (f"POST /validate HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\n"
            "X-Pad: ").encode()
    head += b"a" * (15000 - len(head))
    states = {
        "idle": lambda s: ctx.wrap_socket(s, server_hostname=HOST),
        "handshake": lambda s: (s.sendall(hello(16 * 1024 - 6)), s)[1],
        "headers": lambda s: (lambda t: (t.sendall(head), t)[1])(
            ctx.wrap_socket(s, server_hostname=HOST)),
    }
    for name, make in states.items():
        time.sleep(1.0)
        before = rss(pid)
        conns = [make(socket.create_connection(("127.0.0.1", port))) for _ in range(n)]
        time.sleep(1.5)
        after = rss(pid)
        print(f"{name}: {n} connections, VmRSS {before / 1048576:.1f} -> {after / 1048576:.1f} MiB, "
              f"{(after - before) / n / 1024:.1f} KiB each", flush=True)
        for c in conns:
            c.close()


if __name__ == "__main__":
    main()
