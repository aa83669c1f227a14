#!/usr/bin/env python3
"""Counts a server's user-space instructions per echo round trip or per HTTP
request, under callgrind.

    bench/server_instructions.py echo|http N -- SERVER [ARGS...]

Any argument of SERVER equal to or containing PORT gets a free port. The
server runs under `valgrind --tool=callgrind` twice: once loaded with N
operations, once with 2N; each run ends with SIGTERM, and callgrind's total
of the server (all its threads) is read from its output. The difference of
the two totals over N is the instructions per operation: start-up, the
accept of each connection and shutdown cancel out, so only the steady
state is left. The load is 10 connections, each one operation in flight
at a time (a 64-byte message echoed, or a keep-alive GET / read whole by
its Content-Length), driven by one thread of this script; the client's own
cost is not counted, since it is not under callgrind.

Prints one JSON line: {"bench", "instructions_per_op", "n", "totals"}.
"""
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time

CONNECTIONS = 10
MESSAGE = b"x" * 64
REQUEST = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def connect(port, deadline):
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=5)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def complete_response(buffer):
    """The length of the first whole HTTP response in buffer, or 0."""
    end = buffer.find(b"\r\n\r\n")
    if end < 0:
        return 0
    length = 0
    for line in buffer[:end].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    total = end + 4 + length
    return total if len(buffer) >= total else 0


def load(port, kind, n):
    """n operations over CONNECTIONS connections, each one at a time."""
    deadline = time.monotonic() + 60
    conns = [connect(port, deadline) for _ in range(CONNECTIONS)]
    out = MESSAGE if kind == "echo" else REQUEST
    pending = {c.fileno(): [c, b""] for c in conns}
    sent = 0
    for c in conns:
        if sent < n:
            c.sendall(out)
            sent += 1
    done = 0
    poller = select.poll()
    for c in conns:
        poller.register(c, select.POLLIN)
    while done < n:
        events = poller.poll(60_000)
        if not events:
            raise RuntimeError(f"server stopped answering after {done} of {n}")
        for fd, _ in events:
            entry = pending[fd]
            chunk = entry[0].recv(65536)
            if not chunk:
                raise RuntimeError("server closed a connection")
            entry[1] += chunk
            while True:
                size = len(MESSAGE) if kind == "echo" and len(entry[1]) >= len(MESSAGE) else (
                    complete_response(entry[1]) if kind == "http" else 0)
                if size == 0:
                    break
                entry[1] = entry[1][size:]
                done += 1
                if sent < n:
                    entry[0].sendall(out)
                    sent += 1
    for c in conns:
        c.close()


def stop(proc, port):
    """Ends the server with SIGTERM, so that callgrind writes its output.

    Valgrind delivers a signal to its guest only when a guest thread enters
    or leaves a system call, and it keeps the signal pending while a thread
    sleeps in io_uring_enter: a server idle on its ring would never see it.
    One more connection, opened and closed, completes the ring's accept, so
    the thread wakes and takes the signal; it costs the same at n and 2n."""
    proc.send_signal(signal.SIGTERM)
    for _ in range(30):
        try:
            proc.wait(timeout=2)
            return
        except subprocess.TimeoutExpired:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=2).close()
            except OSError:
                pass
    proc.kill()
    proc.wait()


def total_instructions(kind, n, server):
    port = free_port()
    fd, out = tempfile.mkstemp(prefix="pollux-callgrind-")
    os.close(fd)
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--dump-instr=no"]
    cmd += [a.replace("PORT", str(port)) for a in server]
    env = dict(os.environ, PORT=str(port))
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        load(port, kind, n)
        time.sleep(0.2)  # the last replies' bookkeeping (wakes, re-arms) is part of the work
    finally:
        stop(proc, port)
    total = None
    with open(out) as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                total = int(line.split()[1])
    os.unlink(out)
    if total is None:
        raise RuntimeError("callgrind wrote no total (did the server die before its output?)")
    return total


def main():
    args = sys.argv[1:]
    if len(args) < 4 or args[0] not in ("echo", "http") or args[2] != "--":
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    kind, n, server = args[0], int(float(args[1])), args[3:]
    one = total_instructions(kind, n, server)
    two = total_instructions(kind, 2 * n, server)
    print(json.dumps({"bench": kind, "instructions_per_op": round((two - one) / n, 1), "n": n,
                      "totals": [one, two]}))


if __name__ == "__main__":
    main()
