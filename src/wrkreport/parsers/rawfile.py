"""Raw files: read one file of an untrusted run directory -- regular, inside it, capped in size.

A run directory may come from another machine (the README's workflow copies one under
raw/), so nothing in it is trusted: a name may be a symlink to /etc/passwd, a FIFO that
never ends, a device, or a file of gigabytes. Every reader goes through `read_bytes`,
which opens without blocking, looks at what was opened (fstat), and reads at most its cap.
Every file name that comes from the run itself (its listing, a manifest field) first passes
`name_problem`, the one gate for path-like values: only a plain file name inside the
directory gets as far as the filesystem (or a link on the page).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..core.errors import RefusedFile

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


NAME_MAX_BYTES = 255  # the longest file name Linux filesystems take (ext4, xfs, btrfs, tmpfs: NAME_MAX)


def name_problem(value) -> str | None:
    """Return why value cannot be a plain file name inside a run directory (None when it can).

    The one gate for every file name or path a run directory gives (its listing, the
    manifest's file fields): no NUL or other control character, no lone surrogate (a name
    of undecodable bytes, or JSON's "\\udcff"), at most NAME_MAX_BYTES bytes in UTF-8, not
    empty, not "." or "..", no "/" (absolute, parent or subdirectory paths).

    >>> name_problem("go-http.gomaxprocs-1.run-1.wrk.txt") is None
    True
    >>> name_problem("a\\x00b"), name_problem("../etc/passwd"), name_problem("\\udcff.wrk.txt")
    ('it holds a NUL byte', 'a path to a parent directory, not a file name', 'it holds bytes that are not UTF-8 (a lone surrogate)')
    """
    if not isinstance(value, str):
        return f"expected a file name, found {type(value).__name__}"
    if value in ("", ".", ".."):
        return "an empty name" if not value else "a directory, not a file name"
    if "/" in value:
        if value.startswith("/"):
            return "an absolute path, not a file name in the run"
        return (
            "a path to a parent directory, not a file name"
            if ".." in value.split("/")
            else "a path into a directory, not a plain file name"
        )
    if "\x00" in value:
        return "it holds a NUL byte"
    control = next((c for c in value if ord(c) < 32 or 127 <= ord(c) < 160), None)
    if control is not None:
        return f"it holds the control character {control!r}"
    if any(0xD800 <= ord(c) <= 0xDFFF for c in value):
        return "it holds bytes that are not UTF-8 (a lone surrogate)"
    size = len(value.encode("utf-8"))
    if size > NAME_MAX_BYTES:
        return f"{size} bytes long, over the {NAME_MAX_BYTES} a file name may have"
    return None


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
    # A resolved path never passes through a symlink or "..": under root as written, it is under root resolved too, and
    # root is resolved (a walk of its every directory, per file) only for the paths that are not.
    if not real.is_relative_to(root) and not real.is_relative_to(root.resolve()):
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
