#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
"""Raises a paced storm of port events through a verbs simulator socket.

    vsim_storm.py SOCKET DEVICE PORT EVENTS SECONDS

Toggles DEVICE:PORT between DOWN and INIT, EVENTS times spread evenly over
SECONDS (each toggle is one port event in the mlx5 style), on one connection;
a reader thread consumes the replies. Prints "sent=N errors=N seconds=S".
"""
import socket
import sys
import threading
import time


def main():
    if len(sys.argv) != 6:
        sys.stderr.write("usage: vsim_storm.py SOCKET DEVICE PORT EVENTS SECONDS\n")
        return 2
    path, dev, port = sys.argv[1], sys.argv[2], sys.argv[3]
    events, seconds = int(sys.argv[4]), float(sys.argv[5])
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    replies = {"ok": 0, "errors": 0}
    done = threading.Event()

    def reader():
        buf = b""
        while replies["ok"] + replies["errors"] < events:
            data = sock.recv(65536)
            if not data:
                break
            buf += data
            *lines, buf = buf.split(b"\n")
            for line in lines:
                replies["ok" if line.startswith(b"ok") else "errors"] += 1
        done.set()

    threading.Thread(target=reader, daemon=True).start()
    period = seconds / events
    start = time.monotonic()
    for i in range(events):
        delay = start + i * period - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        state = "down" if i % 2 == 0 else "init"
        sock.sendall(("port %s %s state=%s\n" % (dev, port, state)).encode())
    elapsed = time.monotonic() - start
    done.wait(30)
    print("sent=%d errors=%d seconds=%.3f" % (events, replies["errors"], elapsed))
    return 0 if replies["errors"] == 0 and replies["ok"] == events else 1


if __name__ == "__main__":
    sys.exit(main())
