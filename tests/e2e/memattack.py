#!/usr/bin/env python3
"""Memory attacks on the webhook port, as a hostile in-cluster client would run them.

usage: memattack.py hold  PORT CA N LENGTH SECONDS
         N connections each announce Content-Length LENGTH and send all of it but the last
         byte, as fast as the server reads, then hold the connection open for SECONDS (the
         server buffers what it accepted meanwhile). Prints "holding" when every connection
         has sent what it will send; then each connection not answered yet sends its last byte,
         and the script prints one line per connection: its HTTP status code ("none": none), with "/N"
         after it when the answer carries Retry-After: N.
       memattack.py burst PORT CA N FILE
         N connections post FILE at the same moment (complete bodies, decided at once).
         Prints one HTTP status code per connection ("none" if the connection failed).
The service name jobguard.default.svc is what the certificate covers; connections go to 127.0.0.1.
"""
import socket
import ssl
import sys
import threading
import time

HOST = "jobguard.default.svc"


def connect(port, ca):
    ctx = ssl.create_default_context(cafile=ca)
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    return ctx.wrap_socket(s, server_hostname=HOST)


def head(length):
    return (f"POST /validate HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {length}\r\n\r\n").encode()


def status_of(s, wait):
    """The status code of a response already sent (or sent within `wait` seconds), followed by
    "/N" when it carries Retry-After: N."""
    s.settimeout(wait)
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    except (socket.timeout, OSError):
        pass
    parts = data.split(b" ", 2)
    if len(parts) < 2 or not data.startswith(b"HTTP/1.1"):
        return "none"
    code = parts[1].decode()
    for line in data.split(b"\r\n\r\n")[0].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"retry-after":
            code += "/" + value.strip().decode()
    return code


def hold(port, ca, n, length, seconds):
    conns, threads = [None] * n, []
    chunk = b"x" * 65536

    def one(i):
        try:
            s = connect(port, ca)
        except OSError:
            return
        conns[i] = s
        try:
            s.sendall(head(length))
            left = length - 1
            while left > 0:
                k = min(left, len(chunk))
                s.sendall(chunk[:k])
                left -= k
        except OSError:
            pass  # refused early: the server closed after its answer

    for i in range(n):
        t = threading.Thread(target=one, args=(i,))
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    print("holding", flush=True)
    time.sleep(seconds)
    for s in conns:
        if not s:
            print("none", flush=True)
            continue
        code = status_of(s, 0.2)  # answered early (413) and closed
        if code == "none":
            try:
                s.sendall(b"x")
                code = status_of(s, 30)
            except OSError:
                pass
        print(code, flush=True)
        s.close()


def burst(port, ca, n, path):
    body = open(path, "rb").read()
    codes = ["none"] * n
    ready = threading.Barrier(n)

    def one(i):
        try:
            s = connect(port, ca)
            ready.wait(30)
            try:
                s.sendall(head(len(body)) + body)
            except OSError:
                pass  # answered and closed early: read what was answered
            codes[i] = status_of(s, 60)
            s.close()
        except (OSError, threading.BrokenBarrierError):
            pass

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for c in codes:
        print(c)


def main():
    mode, port, ca = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if mode == "hold":
        hold(port, ca, int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6]))
    elif mode == "burst":
        burst(port, ca, int(sys.argv[4]), sys.argv[5])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
