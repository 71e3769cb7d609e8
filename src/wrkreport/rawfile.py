"""Raw files: read one file of an untrusted run directory -- regular, inside it, capped in size.

A run directory may come from another machine (the README's workflow copies one under
raw/), so nothing in it is trusted: a name may be a symlink to /etc/passwd, a FIFO that
never ends, a device, or a file of gigabytes. Every reader goes through `read_bytes`,
which opens without blocking, looks at what was opened (fstat), and reads at most its cap.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .errors import RefusedFile

MiB = 1024 * 1024
# The largest file of each kind read (docs/raw-format.md; docs/pitfalls.md, "What a run directory may contain").
CAP_BYTES = {
    "manifest": 16 * MiB,  # a 5-minute default run writes ~40 KB
    "wrk": 1 * MiB,  # wrk --latency prints ~1 KB; wrk2's full spectrum ~20 KB
    "cpu": 1 * MiB,  # ~600 bytes
    "headers": 64 * 1024,  # `curl -sI`: 141 bytes with the default body
    "hist": 16 * MiB,  # wrk's latency histogram: ~100 KB for a 1-second measurement
    "vegeta": 64 * MiB,  # vegeta's per-request results, CSV gzip'd: ~15 bytes a request, ~4 million (parsers/vegeta.py)
}
FILE_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a directory",
    stat.S_IFLNK: "a symlink",
}


def read_bytes(path: Path, cap: int, root: Path | None = None) -> bytes:
    """Return the bytes of path, a regular file of at most cap bytes (inside root when given); else raise RefusedFile."""
    return read_regular(path, root, lambda fd, name: read_capped(fd, cap, name))


def read_head(path: Path, size: int, root: Path | None = None) -> bytes:
    """Return the first size bytes of path, a regular file (inside root when given), however long it is; else raise RefusedFile."""
    return read_regular(path, root, lambda fd, name: read_capped(fd, size, name, truncate=True))


def read_regular(path: Path, root: Path | None, read) -> bytes:
    """Open path without blocking or leaving root, check it is a regular file, and return read(fd, name)."""
    name = str(path)
    target = Path(path)
    if root is not None:
        target = inside(target, root, name)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)
    if root is not None:
        flags |= getattr(os, "O_NOFOLLOW", 0)  # target is resolved: a symlink now would be a swap
    try:
        fd = os.open(target, flags)
    except OSError as exc:
        raise RefusedFile(name, f"cannot read: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = FILE_KINDS.get(stat.S_IFMT(mode), "not a regular file")
            raise RefusedFile(name, f"{kind}, not a regular file; not read")
        return read(fd, name)
    finally:
        os.close(fd)


def inside(path: Path, root: Path, name: str) -> Path:
    """Return path with its symlinks resolved, or raise RefusedFile when that leaves root."""
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop (Python < 3.13)
        reason = getattr(exc, "strerror", None) or "a broken or looping symlink"
        raise RefusedFile(name, f"cannot read: {reason}") from None
    if not real.is_relative_to(root.resolve()):
        raise RefusedFile(name, "a symlink to a file outside the run directory; not read")
    return real


def read_capped(fd: int, cap: int, name: str, truncate: bool = False) -> bytes:
    """Return at most cap bytes from fd; when there are more, raise RefusedFile (or, with truncate, return the first cap)."""
    chunks, size = [], 0
    while size <= cap:
        try:
            chunk = os.read(fd, min(cap + 1 - size, MiB))
        except OSError as exc:
            raise RefusedFile(name, f"cannot read: {exc.strerror or exc}") from None
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    if size > cap and truncate:
        return b"".join(chunks)[:cap]
    if size > cap:
        raise RefusedFile(name, f"larger than the {format_size(cap)} a file of this kind may have; not read")
    return b"".join(chunks)


def format_size(size: int) -> str:
    """Return a cap in words.

    >>> format_size(16 * MiB)
    '16 MiB'
    >>> format_size(65536)
    '64 KiB'
    """
    return f"{size // MiB} MiB" if size % MiB == 0 else f"{size // 1024} KiB"
