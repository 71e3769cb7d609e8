"""Target: the machine running the servers (--server-host) -- its Go architecture, busy ports, CPU over ssh, manifest record and RTT.

run_bench.sh starts and stops the servers there through server_machine.sh (copied into a private
work dir on the target); this module holds what needs text or numbers: which GOARCH to
build for, which needed ports the target's /proc/net/tcp shows busy, the CPU times of the
servers read over the run's ssh master connection by a long-lived `sh server_machine.sh cpu` (one
round trip per snapshot), the manifest's `server_host` and `network.rtt` (docs/raw-format.md).
Everything read from the target is untrusted text: parsed strictly, anything else ignored.
"""

from __future__ import annotations

import os
import select
import socket
import statistics
import subprocess
import time

from ..core.errors import UsageError
from ..core.setups import SETUP_BY_ID

# `uname -m` -> (GOARCH, extra environment) for `go build` on the controller.
GOARCH = {
    "x86_64": ("amd64", {}),
    "amd64": ("amd64", {}),
    "aarch64": ("arm64", {}),
    "arm64": ("arm64", {}),
    "armv7l": ("arm", {"GOARM": "7"}),
    "armv6l": ("arm", {"GOARM": "6"}),
    "i686": ("386", {}),
    "i386": ("386", {}),
    "ppc64le": ("ppc64le", {}),
    "s390x": ("s390x", {}),
    "riscv64": ("riscv64", {}),
}
ANSWER_END = "@@end"
ANSWER_TIMEOUT_S = 30.0  # a snapshot takes milliseconds; this long means the link is gone
RTT_SAMPLES = 10
RTT_METHOD = "TCP connect to the target's ssh port from the controller (SYN to SYN-ACK: one round trip), timed in Python; one connect before, not counted (ARP)"


class TargetLost(OSError):
    """The ssh connection to the target ended or stopped answering."""


def goarch(machine: str | None) -> tuple[str, dict[str, str]]:
    """Return the GOARCH (and GOARM) to build for a `uname -m`: 'x86_64' -> ('amd64', {})."""
    if machine not in GOARCH:
        raise UsageError(
            f"--server-host: cannot build the Go servers for the target's architecture {machine!r} (uname -m); known: {', '.join(sorted(GOARCH))}"
        )
    return GOARCH[machine]


def listening_ports(tcp_text: str) -> set[int]:
    """Return the local ports in LISTEN state (st 0A) in /proc/net/tcp and tcp6 text."""
    ports = set()
    for row in tcp_text.splitlines():
        fields = row.split()
        if len(fields) > 3 and fields[3] == "0A" and ":" in fields[1]:
            try:
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
            except ValueError:
                continue
    return ports


def busy_port_lines(tcp_text: str, needed: dict[str, int], host: str) -> list[str]:
    """Return one message per needed port something already listens on at the target."""
    busy = listening_ports(tcp_text)
    return [f"port {port} ({name}) is in use on {host}" for name, port in needed.items() if port in busy]


def ssh_argv(control: str | None, config: str | None, host: str, command: str) -> list[str]:
    """Return the ssh command running `command` on host through the run's master (as run_bench.sh's ssh_cmd)."""
    argv = ["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3"]
    if control:
        argv += ["-o", f"ControlPath={control}"]
    if config:
        argv += ["-F", config]
    return [*argv, "--", host, command]


def stat_line(text: str) -> tuple[int, int, int, int] | None:
    """Return (pid, ppid, utime, stime) of a /proc/PID/stat line, or None when it is not one."""
    head, sep, rest = text.rpartition(") ")
    fields = rest.split()
    pid = head.split(" (", 1)[0]
    if not sep or len(fields) < 13 or not pid.isdigit() or not all(f.isdigit() for f in (fields[1], fields[11], fields[12])):
        return None
    return int(pid), int(fields[1]), int(fields[11]), int(fields[12])


SESSION_SERVERS = ("app",)  # counted by their whole session (started with setsid), however deep: `snap app:PID:session`


def snapshot_of(lines: list[str], roots: dict[str, int]) -> dict[str, dict[int, tuple[int, int]]]:
    """Return cpu.cpu_snapshot's shape from `snap` answer lines: per name, its root PID and
    (nginx, node) the root's children, or (the app) every process of its session, each with (utime, stime)."""
    snapshot: dict[str, dict[int, tuple[int, int]]] = {name: {} for name in roots}
    for line in lines:
        name, _, text = line.partition(" ")
        parsed = stat_line(text)
        if name not in roots or parsed is None:
            continue
        pid, ppid, user, system = parsed
        if pid == roots[name] or (name in ("nginx", "node") and ppid == roots[name]) or name in SESSION_SERVERS:
            snapshot[name][pid] = (user, system)
    return snapshot


def snap_item(name: str, pid: int) -> str:
    """Return one item of a `snap` line: 'nginx:41' (the PID and its children), 'app:57:session' (its whole session)."""
    return f"{name}:{int(pid)}:session" if name in SESSION_SERVERS else f"{name}:{int(pid)}"


class TargetShell:
    """A long-lived `sh server_machine.sh cpu` on the target, over the run's ssh master: one round trip per question."""

    def __init__(self, argv: list[str], host: str):
        self.host = host
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.buffer = b""
        self.ticks_per_s = int(self.ask("tck")[0])

    def ask(self, line: str) -> list[str]:
        """Send one command line; return the answer's lines (up to @@end); raise TargetLost when none comes."""
        try:
            self.proc.stdin.write(line.encode() + b"\n")
            self.proc.stdin.flush()
        except OSError as exc:
            raise TargetLost(f"lost the ssh connection to {self.host} ({exc.strerror or exc})") from None
        deadline = time.monotonic() + ANSWER_TIMEOUT_S
        fd = self.proc.stdout.fileno()
        while True:
            head, sep, rest = self.buffer.partition(ANSWER_END.encode() + b"\n")
            if sep:
                self.buffer = rest
                return head.decode(errors="replace").splitlines()
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TargetLost(f"lost the ssh connection to {self.host}: no answer in {ANSWER_TIMEOUT_S:g}s")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise TargetLost(f"lost the ssh connection to {self.host} (ssh exited)")
            self.buffer += chunk

    def snapshot(self, pids: dict) -> dict[str, dict[int, tuple[int, int]]]:
        """Return the CPU ticks of the pass's servers (cpu.server_pids' groups) on the target."""
        roots = {name: pids[name] for name in ("go", "fasthttp", "nginx", "node", *SESSION_SERVERS) if pids.get(name)}
        if not roots:
            return {}
        return snapshot_of(self.ask("snap " + " ".join(snap_item(n, p) for n, p in roots.items())), roots)

    def running(self, pids: list[int]) -> bool:
        """Return True when every PID runs on the target (not a zombie)."""
        return self.ask("running " + " ".join(str(int(p)) for p in pids)) == ["yes"]

    def children(self, pid: int) -> list[int]:
        """Return the child PIDs of a process on the target."""
        return sorted(int(x) for x in self.ask(f"children {pid}") if x.strip().isdigit())

    def close(self) -> None:
        """End the remote shell (its input closes) and the ssh process."""
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()


SESSION: dict = {"control": None, "dir": None, "shell": None}  # set by `serve --ssh-control --target-dir`


def target_shell(manifest: dict) -> TargetShell | None:
    """Return the run's target shell (started on first use), or None when the servers run here."""
    host = manifest["parameters"].get("server_host")
    if not host:
        return None
    if SESSION["shell"] is None:
        if not SESSION["dir"]:
            raise UsageError("the servers run on --server-host: this helper needs --target-dir (run_bench.sh passes it to serve)")
        argv = ssh_argv(
            SESSION["control"], manifest["parameters"].get("ssh_config"), host, f"exec sh {SESSION['dir']}/server_machine.sh cpu"
        )
        SESSION["shell"] = TargetShell(argv, host)
    return SESSION["shell"]


def close_target_shell() -> None:
    """End the target shell, if one was started."""
    if SESSION["shell"] is not None:
        SESSION["shell"].close()
        SESSION["shell"] = None


def rtt_samples(host: str, port: int, samples: int = RTT_SAMPLES, timeout_s: float = 5.0) -> list[float]:
    """Return the seconds each of `samples` TCP connects to host:port took (one round trip each)."""
    with socket.create_connection((host, port), timeout=timeout_s):
        pass  # not counted: the first may include resolving the neighbour's link address
    times = []
    for _ in range(samples):
        started = time.perf_counter()
        with socket.create_connection((host, port), timeout=timeout_s):
            times.append(time.perf_counter() - started)
    return times


def rtt_record(times: list[float], origin: str, to: str) -> dict:
    """Return one `network.rtt` entry (contract-12) from connect times in seconds."""
    return {"from": origin, "to": to, "method": RTT_METHOD, **rtt_figures([t * 1000 for t in times])}


def rtt_figures(ms: list[float]) -> dict:
    """Return a `network.rtt` entry's samples, min_ms, median_ms and max_ms from round trips in ms (None figures without any)."""
    if not ms:
        return {"samples": 0, "min_ms": None, "median_ms": None, "max_ms": None}
    return {"samples": len(ms), "min_ms": round(min(ms), 3), "median_ms": round(statistics.median(ms), 3), "max_ms": round(max(ms), 3)}


TARGET_TOOLS = ("nginx", "node")  # the target's own programs a run may start; the Go servers are built here


def target_tools(setups: list[str]) -> list[str]:
    """Return the target's programs the run's setups start there (their versions go in `server_host`)."""
    needed = {process for s in setups for process in SETUP_BY_ID[s].needs}
    return [tool for tool in TARGET_TOOLS if tool in needed]


def server_host_record(facts: dict, ssh: str, address: str, ulimit_n: int | str | None, tools: list[str]) -> dict:
    """Return the manifest's `server_host` from remote.parse_facts's result (ulimit_n: as raised for the servers; tools: target_tools)."""
    versions = {tool: facts["versions"].get(tool) for tool in tools}
    return {
        "ssh": ssh,
        "address": address,
        "machine": facts["machine"],
        "versions": versions,
        "sysctl": facts["sysctl"],
        "ulimit_n": ulimit_n if ulimit_n is not None else facts["ulimit_n"],
        "net_ns": facts["net_ns"],
        "boot_id": facts.get("boot_id"),
    }


def ssh_connection(text: str) -> tuple[str, int]:
    """Return (server address, server port) from the target's $SSH_CONNECTION ('c cport s sport')."""
    fields = text.split()
    if len(fields) != 4 or not fields[3].isdigit():
        raise UsageError(
            f"--server-host: cannot read the target's address from $SSH_CONNECTION {text.strip()[:80]!r}; give --server-address"
        )
    return fields[2].split("%", 1)[0], int(fields[3])
