"""Remote clients' state: the clients and their JSON state file, their facts, wrk installed, work dirs, RTT, the manifest's hosts, cleanup (run here, over ssh)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ...core.errors import UsageError
from ..hosts import LOCAL
from ..remote import FACTS_SCRIPT, parse_facts
from ..server_machine import rtt_figures
from .agent import RTT_PORT, down_script, mkdir_script, rtt_script
from .totals import CLIENT_FILE

SSH_OPTIONS = ("-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3")
REMOTE_DIR = re.compile(r"/[A-Za-z0-9_./-]+\Z")


class ClientError(Exception):
    """A client cannot take part: unreachable, no wrk, no work dir (a preflight error, exit 2)."""


@dataclass(frozen=True)
class Client:
    """One wrk machine of the run: label, ssh target (or local) and its private work dir there."""

    label: str
    host: str
    dir: str | None = None

    @property
    def remote(self) -> bool:
        return self.host != LOCAL


@dataclass
class Clients:
    """The clients of a run and how to reach them (the state file's contents)."""

    control_path: str
    ssh_config: str | None
    clients: list[Client]
    facts: dict[str, dict] = field(default_factory=dict)  # label -> parse_facts(...)
    rtt: list[dict] = field(default_factory=list)

    def ssh(self, host: str, command: str, stdin: bool = False) -> list[str]:
        """Return the argv running a shell command on host through its master connection (stdin from /dev/null unless stdin)."""
        argv = ["ssh", *(() if stdin else ("-n",)), "-o", f"ControlPath={self.control_path}", *SSH_OPTIONS]
        if self.ssh_config:
            argv += ["-F", self.ssh_config]
        return [*argv, "--", host, command]

    def to_json(self) -> dict:
        return {
            "control_path": self.control_path,
            "ssh_config": self.ssh_config,
            "clients": [{"client": c.label, "host": c.host, "dir": c.dir} for c in self.clients],
            "facts": self.facts,
            "rtt": self.rtt,
        }


def load_clients(path: Path) -> Clients:
    """Return the state file written by `clients-preflight`."""
    data = json.loads(Path(path).read_text())
    clients = [Client(c["client"], c["host"], c.get("dir")) for c in data["clients"]]
    return Clients(data["control_path"], data.get("ssh_config"), clients, data.get("facts", {}), data.get("rtt", []))


def save_clients(path: Path, state: Clients) -> None:
    """Write the state file atomically (it is read by the cleanup even after a failed preflight)."""
    tmp = Path(f"{path}.tmp")
    tmp.write_text(json.dumps(state.to_json(), indent=1) + "\n")
    os.replace(tmp, path)


def labelled(hosts: list[str]) -> list[Client]:
    """Return the clients in the order given, labelled client-1, client-2, ..."""
    return [Client(f"client-{i}", host) for i, host in enumerate(hosts, 1)]


def client_file(name: str, client: str) -> str:
    """Return a measurement's file name for one client: 'x.run-1.wrk.txt' -> 'x.run-1.client-2.wrk.txt'."""
    match = CLIENT_FILE.match(name)
    if not match:
        raise UsageError(f"{name}: expected a name ending in .wrk.txt, .ab.txt or .hist.json")
    return f"{match['stem']}.{client}{match['suffix']}"


def rtt_record(client: str, address: str, text: str) -> dict:
    """Return the network.rtt entry from rtt_script's output (null figures, with the reason, when nothing was timed)."""
    lines = text.splitlines()
    method = next((line.split(None, 1)[1] for line in lines if line.startswith("method ")), "none")
    samples = [float(line.split()[1]) for line in lines if re.fullmatch(r"ms [0-9.]+(?:e-?[0-9]+)?", line)]
    described = {
        "python3": f"TCP connect to {address}:{RTT_PORT} from the client (python3; SYN to SYN-ACK or RST); one connect before, not counted (ARP)",
        "ping": f"ICMP echo (ping) from the client to {address}; one echo before, not counted (ARP)",
    }.get(method, f"not measured: neither python3 nor ping on {client}")
    if method in ("python3", "ping") and not samples:
        error = next((line[6:] for line in lines if line.startswith("error ")), "no reply")
        described += f"; not measured: {error[:200]}"
    return {"from": client, "to": address, "method": described, **rtt_figures(samples)}


def shell(argv: list[str], stdin: str | bytes | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run a command (ssh or sh), capturing its output; never raises for its exit status."""
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run(
        argv, input=data, capture_output=True, timeout=timeout, check=False, stdin=None if data is not None else subprocess.DEVNULL
    )


def on_client(state: Clients, client: Client, script: str, stdin: bytes | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run a sh script on a client: here with sh, or over its ssh master."""
    if not client.remote:
        return shell(["sh", "-c", script], stdin, timeout)
    return shell(state.ssh(client.host, f"sh -c {shlex.quote(script)}", stdin=stdin is not None), stdin, timeout)


def said(done: subprocess.CompletedProcess) -> str:
    """Return a command's stderr (else stdout) as one line."""
    text = (done.stderr or done.stdout or b"").decode(errors="replace")
    return " ".join(text.split())[:300] or f"exit status {done.returncode}"


def client_facts(state: Clients, client: Client) -> dict:
    """Return what remote.py reads of a client."""
    done = on_client(state, client, FACTS_SCRIPT)
    if done.returncode != 0:
        raise ClientError(f"{client.label} ({client.host}): cannot read the machine's facts: {said(done)}")
    return parse_facts(done.stdout.decode(errors="replace"))


def install_wrk(state: Clients, client: Client, log) -> None:
    """Install wrk on a client where it is root and has apt-get; else raise with the command to run."""
    facts = state.facts[client.label]
    command = "sudo apt-get update && sudo apt-get install -y wrk"
    if facts["uid"] != 0:
        raise ClientError(
            f"{client.label} ({client.host}): wrk is missing and ssh does not log in as root there. Install it there with: {command}"
        )
    log(f"{client.label} ({client.host}): wrk is missing; installing it there with apt-get")
    done = on_client(
        state,
        client,
        "command -v apt-get >/dev/null || exit 127; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wrk",
        timeout=600,
    )
    if done.returncode != 0:
        raise ClientError(
            f"{client.label} ({client.host}): apt-get install wrk failed there ({said(done)}). Install it there with: {command}"
        )


def make_dir(state: Clients, client: Client, hist_script: Path) -> Client:
    """Make the client's private work dir, copy histogram.lua into it; return the client with its dir."""
    done = on_client(state, client, mkdir_script())
    path = done.stdout.decode(errors="replace").strip()
    if done.returncode != 0 or not REMOTE_DIR.fullmatch(path):
        raise ClientError(f"{client.label} ({client.host}): mktemp -d failed there: {said(done)}")
    made = Client(client.label, client.host, path)
    copy = on_client(state, made, f"cat > {shlex.quote(path + '/' + hist_script.name)}", stdin=hist_script.read_bytes())
    if copy.returncode != 0:
        raise ClientError(f"{client.label} ({client.host}): cannot copy {hist_script.name} to {path}: {said(copy)}")
    return made


def preflight(state: Clients, save: Path, hist_script: Path, target: str | None, log) -> None:
    """Check every client (wrk present or installed), make the remote work dirs, time the RTT to the target; save as it goes."""
    for client in state.clients:
        state.facts[client.label] = client_facts(state, client)
        if not state.facts[client.label]["paths"]["wrk"]:
            install_wrk(state, client, log)
            state.facts[client.label] = client_facts(state, client)
            if not state.facts[client.label]["paths"]["wrk"]:
                raise ClientError(f"{client.label} ({client.host}): wrk is still missing after apt-get install wrk")
    for i, client in enumerate(state.clients):
        if client.remote:
            state.clients[i] = make_dir(state, client, hist_script)
            save_clients(save, state)  # the cleanup removes it, whatever happens next
    if target:
        for client in state.clients:
            if client.remote:
                done = on_client(state, client, rtt_script(target), timeout=60)
                state.rtt.append(rtt_record(client.label, target, done.stdout.decode(errors="replace")))
    save_clients(save, state)


def manifest_hosts(state: Clients) -> list[dict]:
    """Return the manifest's client_hosts entries."""
    found = []
    for client in state.clients:
        facts = state.facts.get(client.label) or {}
        found.append(
            {
                "client": client.label,
                "ssh": client.host,
                "machine": facts.get("machine"),
                "versions": {"wrk": (facts.get("versions") or {}).get("wrk")},
                "net_ns": facts.get("net_ns"),
                "boot_id": facts.get("boot_id"),
            }
        )
    return found


def down(state: Clients) -> list[str]:
    """Stop any wrk left on the remote clients and remove their work dirs; return what failed."""
    procs = [
        (
            c,
            subprocess.Popen(
                state.ssh(c.host, f"sh -c {shlex.quote(down_script(c.dir))}"),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            ),
        )
        for c in state.clients
        if c.remote and c.dir
    ]
    problems = []
    for client, proc in procs:
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        if proc.returncode != 0:
            problems.append(
                f"{client.label} ({client.host}): could not remove {client.dir}: {' '.join(err.decode(errors='replace').split())[:200] or proc.returncode}"
            )
    return problems
