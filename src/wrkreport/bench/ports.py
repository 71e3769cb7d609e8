"""Ports: whether 127.0.0.1:PORT is free, and which process holds it when not."""

from __future__ import annotations

import os
from pathlib import Path

from .profiles import LOOPBACK


def port_is_free(port: int) -> bool:
    """Return True when a server could listen on 127.0.0.1:port now (as nginx and Go do)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((LOOPBACK, port))
        except OSError:
            return False
    return True


def socket_inodes(port: int, proc: Path = Path("/proc")) -> set[str]:
    """Return the inodes of TCP sockets bound to local port `port` (from /proc/net/tcp{,6})."""
    inodes = set()
    for table in ("tcp", "tcp6"):
        try:
            rows = (proc / "net" / table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if len(fields) > 9 and int(fields[1].rsplit(":", 1)[1], 16) == port and fields[9] != "0":
                inodes.add(fields[9])
    return inodes


def port_owners(port: int, proc: Path = Path("/proc")) -> list[str]:
    """Return 'pid 123 (nginx)' for each process holding a socket on the port, as far as visible."""
    inodes = socket_inodes(port, proc)
    owners = []
    if not inodes:
        return owners
    targets = {f"socket:[{inode}]" for inode in inodes}
    for pid_dir in proc.iterdir():
        if not pid_dir.name.isdigit():
            continue
        if fd_links(pid_dir) & targets:
            owners.append(f"pid {pid_dir.name} ({process_name(pid_dir)})")
    return owners


def fd_links(pid_dir: Path) -> set[str]:
    """Return what a process's open descriptors point at (empty when not visible to us)."""
    links = set()
    try:
        fds = list((pid_dir / "fd").iterdir())
    except OSError:
        return links
    for fd in fds:
        try:
            links.add(os.readlink(fd))
        except OSError:  # closed meanwhile (e.g. the listing's own descriptor)
            continue
    return links


def process_name(pid_dir: Path) -> str:
    """Return a process's command line (or name) for messages."""
    try:
        cmdline = (pid_dir / "cmdline").read_bytes().replace(b"\x00", b" ").decode(errors="replace").strip()
        return cmdline[:80] or (pid_dir / "comm").read_text().strip()
    except OSError:
        return "?"


def busy_port_messages(needed: dict[str, int], proc: Path = Path("/proc")) -> list[str]:
    """Return one message per needed port that is already in use, naming its owner."""
    messages = []
    for name, port in needed.items():
        if port_is_free(port):
            continue
        owners = port_owners(port, proc)
        owner = ", ".join(owners) if owners else "a process this user cannot see (try as root: ss -ltnp)"
        messages.append(f"port {port} ({name}) on {LOOPBACK} is in use by {owner}")
    return messages
