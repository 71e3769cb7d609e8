"""Tests of wrkreport.bench.ports: a busy port named with its owner, on real sockets."""

from __future__ import annotations

import os
import socket

from wrkreport.bench.ports import busy_port_messages


def test_busy_port_is_named_with_its_owner():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        messages = busy_port_messages({"nginx-http": port})
    assert len(messages) == 1
    assert messages[0].startswith(f"port {port} (nginx-http) on 127.0.0.1 is in use by pid {os.getpid()} (")


def test_free_port_gives_no_message():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert busy_port_messages({"go-http": port}) == []
