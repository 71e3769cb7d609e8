"""Remote: what another machine is (CPU, memory, kernel, tools, sysctl) from one POSIX sh script run over ssh.

The driver runs FACTS_SCRIPT on a host (`on_host HOST "$(helper facts-script)"` or
`ssh ... sh -s`) and gives its output to `parse_facts`, which returns the same shapes the
manifest keeps for this machine (`machine`, `versions`, `version_lines`, `sysctl`,
`ulimit_n`) plus `arch`, `uid`, `net_ns` and `boot_id` (the kernel's: two hosts with the same one
are namespaces or containers of one machine, sharing its CPUs). The script needs nothing but sh and coreutils
on the host; its output is untrusted text: every value is cut to MAX_VALUE characters and
numbers are read strictly.
"""

from __future__ import annotations

import re

from .machine import ARTICLE_SYSCTL, VERSION_PATTERNS

MAX_VALUE = 200
TOOLS = ("nginx", "go", "wrk", "curl", "node", "ab")

FACTS_SCRIPT = r"""
export LC_ALL=C
fact() { printf '%s\t%s\n' "$1" "$(printf '%s' "$2" | tr '\t\n\r' '   ' | cut -c1-200)"; }
fact arch "$(uname -m)"
fact kernel "$(uname -r)"
fact logical_cores "$(getconf _NPROCESSORS_CONF 2>/dev/null)"
fact usable_cores "$(nproc 2>/dev/null)"
fact cpu_model "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)"
fact memory_kb "$(sed -n 's/^MemTotal:[[:space:]]*\([0-9]*\) kB$/\1/p' /proc/meminfo 2>/dev/null)"
fact os "$( (. /etc/os-release && printf '%s' "${PRETTY_NAME:-}") 2>/dev/null)"
fact net_ns "$(readlink /proc/self/ns/net 2>/dev/null)"
fact boot_id "$(cat /proc/sys/kernel/random/boot_id 2>/dev/null)"
fact ulimit_n "$(ulimit -n)"
fact uid "$(id -u)"
PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin:/usr/local/go/bin"
for tool in nginx go wrk curl node ab; do
  path="$(command -v "$tool" 2>/dev/null || true)"
  fact "path.$tool" "$path"
  [ -n "$path" ] || continue
  case "$tool" in
    nginx) line="$("$path" -v 2>&1 </dev/null | head -n 1)" ;;
    go) line="$("$path" version 2>&1 </dev/null | head -n 1)" ;;
    wrk) line="$("$path" -v 2>&1 </dev/null | head -n 1)" ;;
    curl) line="$("$path" --version 2>&1 </dev/null | head -n 1)" ;;
    node) line="$("$path" --version 2>&1 </dev/null | head -n 1)" ;;
    ab) line="$("$path" -V 2>&1 </dev/null | head -n 1)" ;;
  esac
  fact "version.$tool" "$line"
done
""" + "".join(f'fact "sysctl.{key}" "$(cat /proc/sys/{key.replace(".", "/")} 2>/dev/null)"\n' for key, _, _ in ARTICLE_SYSCTL)


def facts_lines(text: str) -> dict[str, str]:
    """Return the script's `key<TAB>value` lines as a dict (later lines win; other lines ignored)."""
    facts = {}
    for line in text.splitlines():
        key, sep, value = line.partition("\t")
        if sep and re.fullmatch(r"[a-z_]+(?:\.[a-z0-9_.-]+)?", key):
            facts[key] = value.strip()[:MAX_VALUE]
    return facts


def number(text: str | None, scale: int = 1) -> int | None:
    """Return a plain decimal integer times scale, or None for anything else."""
    return int(text) * scale if text and re.fullmatch(r"[0-9]{1,18}", text) else None


BOOT_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def boot_id(text: str | None) -> str | None:
    """Return a kernel boot id (one per boot of one machine: equal ids mean one kernel, so the same CPUs), or None."""
    return text if text and BOOT_ID.fullmatch(text) else None


def local_boot_id() -> str | None:
    """Return this machine's kernel boot id."""
    try:
        return boot_id(open("/proc/sys/kernel/random/boot_id").read().strip())
    except OSError:
        return None


def parse_facts(text: str) -> dict:
    """Return machine, versions, version_lines, sysctl, ulimit_n, arch, uid, net_ns and tool paths from FACTS_SCRIPT's output."""
    facts = facts_lines(text)
    ulimit = facts.get("ulimit_n")
    versions, lines = {}, {}
    for tool in TOOLS:
        line = facts.get(f"version.{tool}") or None
        lines[tool] = line
        match = VERSION_PATTERNS[tool].search(line) if line else None
        versions[tool] = match.group(1) if match else None
    return {
        "machine": {
            "cpu_model": facts.get("cpu_model") or None,
            "logical_cores": number(facts.get("logical_cores")),
            "usable_cores": number(facts.get("usable_cores")),
            "memory_bytes": number(facts.get("memory_kb"), 1024),
            "kernel": facts.get("kernel") or None,
            "os": facts.get("os") or None,
        },
        "versions": versions,
        "version_lines": lines,
        "paths": {tool: facts.get(f"path.{tool}") or None for tool in TOOLS},
        "sysctl": {key: facts.get(f"sysctl.{key}") or None for key, _, _ in ARTICLE_SYSCTL},
        "ulimit_n": "unlimited" if ulimit == "unlimited" else number(ulimit),
        "arch": facts.get("arch") or None,
        "uid": number(facts.get("uid")),
        "net_ns": facts.get("net_ns") or None,
        "boot_id": boot_id(facts.get("boot_id")),
    }
