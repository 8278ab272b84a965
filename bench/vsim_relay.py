#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
"""Relays stdin to a verbs simulator control socket and its replies to stdout.

    vsim_relay.py SOCKET

One connection for a whole benchmark run: a shell coprocess writes command
lines and reads one reply line per command, without starting a vsimctl
process (10-30 ms) for every port event. Lines written together reach the
simulator together, so events on many ports are raised within microseconds.
"""
import os
import socket
import sys
import threading


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: vsim_relay.py SOCKET\n")
        return 2
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(sys.argv[1])

    def upstream():
        while True:
            data = os.read(0, 65536)
            if not data:
                sock.shutdown(socket.SHUT_WR)
                return
            sock.sendall(data)

    threading.Thread(target=upstream, daemon=True).start()
    while True:
        data = sock.recv(65536)
        if not data:
            return 0
        os.write(1, data)


if __name__ == "__main__":
    sys.exit(main())
