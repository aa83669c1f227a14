#!/usr/bin/env python3
# A subscriber on N channels while a publisher pipelines M PUBLISHes to
# one of them: how long until the subscriber has every message, and how
# many it got. Run it against mini_redis and redis-server side by side:
#   bench/redis_subscribers.py PORT CHANNELS [MESSAGES=100000]
# Prints one JSON line. What it measures: a server whose subscription set
# polls every channel on each wake (O(channels)) slows down with N; one
# with a waker per channel does not.
import json
import socket
import sys
import time


def command(*args):
    out = b"*%d\r\n" % len(args)
    for arg in args:
        arg = arg if isinstance(arg, bytes) else str(arg).encode()
        out += b"$%d\r\n%s\r\n" % (len(arg), arg)
    return out


def main():
    port, channels = int(sys.argv[1]), int(sys.argv[2])
    messages = int(sys.argv[3]) if len(sys.argv) > 3 else 100000
    sub = socket.create_connection(("127.0.0.1", port))
    sub.sendall(b"".join(command("SUBSCRIBE", "ch%d" % i) for i in range(channels)))
    confirmed = b""
    while confirmed.count(b"subscribe\r\n") < channels:
        confirmed += sub.recv(1 << 20)
    pub = socket.create_connection(("127.0.0.1", port))
    batch = b"".join(command("PUBLISH", "ch0", "m") for _ in range(1000))
    start = time.time()
    for _ in range(messages // 1000):
        pub.sendall(batch)
    acks = b""
    while acks.count(b"\r\n") < messages // 1000 * 1000:
        acks += pub.recv(1 << 20)
    sub.settimeout(2.0)
    received, seen = 0, b""
    try:
        while received < messages // 1000 * 1000:
            data = sub.recv(1 << 20)
            if not data:
                break
            seen += data
            received = seen.count(b"$7\r\nmessage\r\n")
    except socket.timeout:
        pass
    print(json.dumps({"bench": "redis_subscribers", "channels": channels, "published": messages // 1000 * 1000,
                      "received": received, "seconds": round(time.time() - start, 3)}))


if __name__ == "__main__":
    main()
