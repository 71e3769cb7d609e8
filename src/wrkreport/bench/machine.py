"""Machine: CPU, memory, kernel, tool versions, the article's sysctl keys and --tune, users' reach."""

from __future__ import annotations

import grp
import os
import platform
import pwd
import re
import subprocess
from pathlib import Path

from ..core.cpus import cpu_count

# The article's kernel settings, in its order. How --tune treats each:
#   "set"    write the article's value;
#   "raise"  a capacity limit: write it only when the current value is lower, never lower it
#            (a current kernel's fs.file-max default, 2^63-1, is far above the article's);
#   "skip"   not a performance setting: left alone (turning ip_forward off would cut off
#            containers and VMs routed through this machine).
ARTICLE_SYSCTL: tuple[tuple[str, str, str], ...] = (
    ("fs.file-max", "9999999", "raise"),
    ("fs.nr_open", "9999999", "raise"),
    ("net.core.netdev_max_backlog", "4096", "raise"),
    ("net.core.rmem_max", "16777216", "raise"),
    ("net.core.somaxconn", "65535", "raise"),
    ("net.core.wmem_max", "16777216", "raise"),
    ("net.ipv4.ip_forward", "0", "skip"),
    ("net.ipv4.ip_local_port_range", "1025 65535", "set"),
    ("net.ipv4.tcp_fin_timeout", "30", "set"),
    ("net.ipv4.tcp_keepalive_time", "30", "set"),
    ("net.ipv4.tcp_max_syn_backlog", "20480", "raise"),
    ("net.ipv4.tcp_max_tw_buckets", "400000", "raise"),
    ("net.ipv4.tcp_no_metrics_save", "1", "set"),
    ("net.ipv4.tcp_syn_retries", "2", "set"),
    ("net.ipv4.tcp_synack_retries", "2", "set"),
    ("net.ipv4.tcp_tw_recycle", "1", "set"),
    ("net.ipv4.tcp_tw_reuse", "1", "set"),
    ("vm.min_free_kbytes", "65536", "set"),
    ("vm.overcommit_memory", "1", "set"),
)


def machine_info(proc: Path = Path("/proc"), os_release: Path = Path("/etc/os-release")) -> dict:
    """Return CPU model, logical cores, memory, kernel and OS of this machine."""
    cpu_model = None
    try:
        for line in (proc / "cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory_bytes = None
    try:
        match = re.search(r"^MemTotal:\s+(\d+) kB", (proc / "meminfo").read_text(), re.M)
        memory_bytes = int(match.group(1)) * 1024 if match else None
    except OSError:
        pass
    os_name = None
    try:
        match = re.search(r'^PRETTY_NAME="?([^"\n]*)"?', os_release.read_text(), re.M)
        os_name = match.group(1) if match else None
    except OSError:
        pass
    return {
        "cpu_model": cpu_model,
        "logical_cores": os.cpu_count(),
        "usable_cores": cpu_count(),
        "memory_bytes": memory_bytes,
        "kernel": platform.release(),
        "os": os_name,
    }


def command_output(argv: list[str]) -> str | None:
    """Return a command's stdout and stderr together, or None when it cannot run."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return (done.stdout + done.stderr).strip()


# Version number patterns, per tool: applied to that tool's version output.
VERSION_PATTERNS = {
    "nginx": re.compile(r"nginx/(\S+)"),
    "go": re.compile(r"\b(go[0-9][^\s]*)"),
    "wrk": re.compile(r"^wrk \S*?([0-9]+\.[0-9]+\.[0-9]+)"),
    "curl": re.compile(r"^curl (\S+)"),
    "ab": re.compile(r"ApacheBench, Version (\S+)"),
    "h2load": re.compile(r"nghttp2/(\S+)"),
    "node": re.compile(r"^v([0-9][^\s]*)"),
    "haproxy": re.compile(r"HAProxy version (\S+)"),
    "caddy": re.compile(r"^v?([0-9][^\s]*)"),
    "apache": re.compile(r"Apache/(\S+)"),
}


def tool_versions(nginx: str | None, extra: tuple[str, ...] = ()) -> tuple[dict, dict]:
    """Return (versions, first version lines) of nginx, go, wrk and curl, and of ab, h2load, node and the other front ends when in extra."""
    commands = {"nginx": [nginx, "-v"] if nginx else None, "go": ["go", "version"], "wrk": ["wrk", "-v"], "curl": ["curl", "--version"]}
    optional = {
        "ab": ["ab", "-V"],
        "h2load": ["h2load", "--version"],
        "node": ["node", "--version"],  # asked for only when the run uses them
        "haproxy": ["haproxy", "-v"],
        "caddy": ["caddy", "version"],
        "apache": ["apache2", "-v"],
    }
    commands.update({tool: optional[tool] for tool in extra})
    versions, raw = {}, {}
    for tool, argv in commands.items():
        text = command_output(argv) if argv else None
        first = text.splitlines()[0] if text else None
        raw[tool] = first
        match = VERSION_PATTERNS[tool].search(first) if first else None
        versions[tool] = match.group(1) if match else None
    return versions, raw


def sysctl_path(key: str, root: Path) -> Path:
    """Return the /proc/sys file of a sysctl key ('net.core.somaxconn' -> .../net/core/somaxconn)."""
    return root / key.replace(".", "/")


def read_sysctl(root: Path = Path("/proc/sys")) -> dict[str, str | None]:
    """Return each of the article's sysctl keys with its current value (None when absent)."""
    values = {}
    for key, _, _ in ARTICLE_SYSCTL:
        try:
            values[key] = " ".join(sysctl_path(key, root).read_text().split())
        except OSError:
            values[key] = None
    return values


def tune_actions(current: dict[str, str | None]) -> list[dict]:
    """Return what --tune does with each article key: its current value, target and decision."""
    actions = []
    for key, target, policy in ARTICLE_SYSCTL:
        now = current.get(key)
        if now is None:
            action = "absent"  # not on this kernel (e.g. tcp_tw_recycle, gone since 4.12)
        elif policy == "skip":
            action = "skip"
        elif now == target:
            action = "same"
        elif policy == "raise" and int(now.split()[0]) >= int(target.split()[0]):
            action = "keep-higher"
        else:
            action = "write"
        actions.append({"key": key, "from": now, "to": target, "action": action})
    return actions


def apply_tune(root: Path, say, before=lambda actions: None) -> list[dict]:
    """Write the article's values per tune_actions, announcing each before writing it.

    before(actions) runs first, before any write, with every planned write marked "ok":
    None, so a record of what is about to change exists even if the run dies meanwhile.
    """
    actions = tune_actions(read_sysctl(root))
    for item in actions:
        if item["action"] == "write":
            item["ok"] = None
    before(actions)
    for item in actions:
        key, old, new = item["key"], item["from"], item["to"]
        if item["action"] == "write":
            say(f"sysctl {key}: {old} -> {new}")
            try:
                sysctl_path(key, root).write_text(new + "\n")
                item["ok"] = True
            except OSError as exc:
                item["ok"] = False
                say(f"sysctl {key}: not changed ({exc.strerror or exc})")
        elif item["action"] == "keep-higher":
            say(f"sysctl {key}: kept at {old} (already above the article's {new})")
        elif item["action"] == "skip":
            say(f"sysctl {key}: left at {old} (the article's {new} is not a performance setting)")
        elif item["action"] == "absent":
            say(f"sysctl {key}: not on this kernel, skipped")
    return actions


def untraversable(path: Path, uid: int, gids: set[int]) -> str | None:
    """Return the first directory on the way to path (itself included) that uid with gids
    cannot search (x permission), as 'DIR (mode 0700, owner 0:0)'; None when all can be."""
    if uid == 0:
        return None
    for directory in [*reversed(path.parents), path]:
        st = directory.stat()
        if st.st_uid == uid:
            bit = 0o100
        elif st.st_gid in gids:
            bit = 0o010
        else:
            bit = 0o001
        if not st.st_mode & bit:
            return f"{directory} (mode {st.st_mode & 0o7777:04o}, owner {st.st_uid}:{st.st_gid})"
    return None


def user_ids(name: str) -> tuple[int, set[int]]:
    """Return a user's uid and every gid it has (primary and supplementary), as initgroups gives."""
    entry = pwd.getpwnam(name)
    gids = {entry.pw_gid} | {g.gr_gid for g in grp.getgrall() if name in g.gr_mem}
    return entry.pw_uid, gids
