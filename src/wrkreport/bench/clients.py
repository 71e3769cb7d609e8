"""Clients: wrk on every --client-hosts machine at once, over the run's ssh masters (preflight, work dirs, start, stop, records).

The driver's state for the clients lives in one JSON file in the script's private work
dir (`clients-preflight --save F`, then `--clients F` for `warm-up` and `measure`, and
`clients-down --state F` in the cleanup): the ssh options, and per client its label
(`client-1`, ...), its host (`local` or `[user@]host`), the private directory made there
with `mktemp -d` (histogram.lua copied into it once), what remote.py read of it and the
RTT to the target. A remote wrk runs under a small POSIX sh wrapper (`run_script`) that
records its PID (so it can be killed by PID over ssh: wrk keeps running when its ssh
session closes), its start and end on that host's clock and its CPU time (`times`); its
stdout and stderr stream back over ssh into the local raw file, and after wrk's stdout the
same session sends the record and the histogram behind a RECORD line (no second ssh
session per measurement), split off locally. Nothing here prints: the subcommands in
__main__ do.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from .hosts import LOCAL
from .remote import FACTS_SCRIPT, parse_facts
from .setups import UsageError
from .target import rtt_figures

HIST_ENV = "WRKREPORT_HIST_FILE"  # read by histogram.lua's done()
SSH_OPTIONS = ("-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3")
RTT_SAMPLES = 10
RTT_PORT = 22  # a TCP connect's SYN -> SYN-ACK (or RST when nothing listens) is one round trip
STOP_WAIT_S = 3.0  # how long the stop script waits for a wrk to exit after SIGTERM
CLIENT_FILE = re.compile(r"(?P<stem>.+?)(?P<suffix>\.wrk\.txt|\.ab\.txt|\.hist\.json)\Z")
TIMES_LINE = re.compile(r"(\d+)m([0-9.]+)s\s+(\d+)m([0-9.]+)s")
REMOTE_DIR = re.compile(r"/[A-Za-z0-9_./-]+\Z")
RECORD = b"\x1ewrkreport-record\n"  # after wrk's stdout: the wrapper's record, then an RS line, then the histogram
READY = b"wrkreport-client-ready\n"  # a remote wrapper's first stderr line: waiting for the start line
READY_TIMEOUT_S = 30.0  # how long the clients' ssh sessions may take to be ready


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


# --- the sh scripts run on a client ------------------------------------------------------------


def mkdir_script() -> str:
    """Return the script making the client's private work dir; it prints the dir."""
    return 'umask 077 && mktemp -d "${TMPDIR:-/tmp}/wrkreport-client.XXXXXX"'


def run_script(workdir: str, name: str, argv: list[str], hist: bool) -> str:
    """Return the sh wrapper running wrk (argv) in workdir as NAME: PID, clock, CPU and status in NAME.* files.

    The start barrier: the wrapper says READY on stderr, then waits for a line on its stdin
    (run_all writes one to every client once all are ready; end of input means stop). A
    NAME.stop file (stop_script) made before wrk starts keeps it from starting; one made
    after is seen right after the PID is written, so a stop never misses a starting wrk.
    The CPU time is the difference of the shell's children times around wrk alone.
    """
    d, n = shlex.quote(workdir), shlex.quote(name)
    env = f"{HIST_ENV}={shlex.quote(f'{workdir}/{name}.hist.json')} " if hist else ""
    return (
        f"cd {d} || exit 125\n"
        f"[ -e {n}.stop ] && exit 143\n"
        f"echo {READY.decode().strip()} >&2\n"
        "read -r go || exit 143\n"
        f"[ -e {n}.stop ] && exit 143\n"
        f"a=$(date -u +%s%3N 2>/dev/null)\n"
        f"times > {n}.t0\n"
        f"{env}{shlex.join(argv)} </dev/null &\n"
        "w=$!\n"
        f"echo \"$w\" > {n}.pid\n"
        f"[ -e {n}.stop ] && kill -TERM \"$w\"\n"
        "wait \"$w\"\n"
        "s=$?\n"
        f"times > {n}.t1\n"
        f"b=$(date -u +%s%3N 2>/dev/null)\n"
        f"printf '\\036wrkreport-record\\nstarted_ms %s\\nended_ms %s\\nstatus %s\\n' \"$a\" \"$b\" \"$s\"\n"
        f"printf 't0 '; tr '\\n' ' ' < {n}.t0; echo\n"
        f"printf 't1 '; tr '\\n' ' ' < {n}.t1; echo\n"
        "printf '\\036\\n'\n"
        + (f"cat {n}.hist.json 2>/dev/null\n" if hist else "")
        + f"rm -f -- {n}.*\n"
        "exit \"$s\"\n"
    )


def kill_lines(pid_file: str) -> str:
    """Return sh lines sending SIGTERM to the wrk whose PID is in pid_file (if it still is wrk), then waiting for it."""
    f = pid_file
    return (
        f"p=$(cat {f} 2>/dev/null)\n"
        "case \"$p\" in ''|*[!0-9]*) p= ;; esac\n"
        "if [ -n \"$p\" ] && [ \"$(cat /proc/$p/comm 2>/dev/null)\" = wrk ]; then\n"
        "  kill -TERM \"$p\" 2>/dev/null\n"
        f"  i=0; while [ -e /proc/$p ] && [ $i -lt {int(STOP_WAIT_S * 10)} ]; do sleep 0.1; i=$((i + 1)); done\n"
        "  [ -e /proc/$p ] && kill -KILL \"$p\" 2>/dev/null\n"
        "fi\n"
    )


def stop_script(workdir: str, name: str) -> str:
    """Return the script stopping the wrk run as NAME (or keeping it from starting)."""
    n = shlex.quote(name)
    return f"cd {shlex.quote(workdir)} 2>/dev/null || exit 0\n: > {n}.stop\n" + kill_lines(f"{n}.pid") + "exit 0\n"


def down_script(workdir: str) -> str:
    """Return the script stopping every wrk still recorded in workdir, then removing it."""
    d = shlex.quote(workdir)
    return f"cd {d} 2>/dev/null || exit 0\nfor f in *.pid; do\n  [ -f \"$f\" ] || continue\n  : > \"${{f%.pid}}.stop\"\n" + "".join(
        "  " + line + "\n" for line in kill_lines('"$f"').splitlines()
    ) + f"done\ncd / && rm -rf -- {d}\n"


RTT_PY = r"""
import socket, sys, time
host, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(n + 1):  # the first is not counted: it may include resolving the neighbour's link address
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(2)
    t = time.perf_counter()
    try:
        s.connect((host, port))
    except ConnectionRefusedError:
        pass
    except OSError as e:
        print("error", e); sys.exit(0)
    finally:
        s.close()
    i and print("ms", (time.perf_counter() - t) * 1000)
    time.sleep(0.05)
"""


def rtt_script(address: str) -> str:
    """Return the script timing RTT_SAMPLES round trips from a client to address (after one not counted): python3's TCP connect, else ping."""
    a = shlex.quote(address)
    return (
        f"if command -v python3 >/dev/null 2>&1; then echo method python3; python3 -c {shlex.quote(RTT_PY)} {a} {RTT_PORT} {RTT_SAMPLES}\n"
        f"elif command -v ping >/dev/null 2>&1; then echo method ping; ping -n -c {RTT_SAMPLES + 1} -i 0.2 {a} 2>&1 | sed -n 's/.*time=\\([0-9.]*\\) ms.*/ms \\1/p' | tail -n +2\n"
        "else echo method none; fi\n"
    )


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


# --- preflight ----------------------------------------------------------------------------------


def shell(argv: list[str], stdin: str | bytes | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run a command (ssh or sh), capturing its output; never raises for its exit status."""
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run(argv, input=data, capture_output=True, timeout=timeout, check=False, stdin=None if data is not None else subprocess.DEVNULL)


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
        raise ClientError(f"{client.label} ({client.host}): wrk is missing and ssh does not log in as root there. Install it there with: {command}")
    log(f"{client.label} ({client.host}): wrk is missing; installing it there with apt-get")
    done = on_client(state, client, "command -v apt-get >/dev/null || exit 127; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wrk", timeout=600)
    if done.returncode != 0:
        raise ClientError(f"{client.label} ({client.host}): apt-get install wrk failed there ({said(done)}). Install it there with: {command}")


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
    procs = [(c, subprocess.Popen(state.ssh(c.host, f"sh -c {shlex.quote(down_script(c.dir))}"), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)) for c in state.clients if c.remote and c.dir]
    problems = []
    for client, proc in procs:
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        if proc.returncode != 0:
            problems.append(f"{client.label} ({client.host}): could not remove {client.dir}: {' '.join(err.decode(errors='replace').split())[:200] or proc.returncode}")
    return problems


# --- one run of wrk on every client --------------------------------------------------------------


@dataclass
class ClientRun:
    """wrk on one client during one warm-up or measurement: where its output goes, and how it ended."""

    client: Client
    name: str  # the files' base name in the client's work dir
    argv: list[str]  # wrk as run there
    out: Path | None  # the local raw file (None: output discarded)
    err: Path  # its stderr, appended to out afterwards
    hist: Path | None  # the local .hist.json (None: no histogram)
    pid: int | None = None
    status: int | None = None
    user_s: float | None = None
    system_s: float | None = None
    started_ms: int | None = None
    ended_ms: int | None = None

    @property
    def command(self) -> str:
        return " ".join(self.argv)


def connection_share(connections: int, index: int, count: int) -> int:
    """Return client index's share of a connection level split over count clients: 100 over 3 -> 34, 33, 33."""
    return connections // count + (1 if index < connections % count else 0)


def client_argv(argv: list[str], client: Client, index: int = 0, count: int = 1) -> list[str]:
    """Return wrk's argv as run on client index of count: its share of `-cN` (the level is the server's total),
    and on a remote one `-s SCRIPT` naming the copy in its work dir."""
    out = list(argv)
    for i, arg in enumerate(out):
        match = re.fullmatch(r"-c([0-9]+)", arg)
        if match and count > 1:
            out[i] = f"-c{connection_share(int(match[1]), index, count)}"
    if not client.remote:
        return out
    for i, arg in enumerate(out[:-1]):
        if arg in ("-s", "--script"):
            out[i + 1] = f"{client.dir}/{Path(out[i + 1]).name}"
    return out


def spawn(argv: list[str], out: Path | None, err: Path, env: dict | None = None, stdin: int | None = None) -> int:
    """Start argv with stdin from the fd given (else /dev/null), stdout to out (or /dev/null), stderr to err; return its PID."""
    null = os.open(os.devnull, os.O_RDWR) if stdin is None else os.dup(stdin)
    o = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644) if out else os.open(os.devnull, os.O_WRONLY)
    e = os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        actions = [(os.POSIX_SPAWN_DUP2, null, 0), (os.POSIX_SPAWN_DUP2, o, 1), (os.POSIX_SPAWN_DUP2, e, 2)]
        return os.posix_spawnp(argv[0], argv, {**os.environ, **(env or {})}, file_actions=actions)
    finally:
        for fd in (null, o, e):
            os.close(fd)


def times_delta(t0: str, t1: str) -> tuple[float, float] | None:
    """Return the children's (user, system) seconds between two `times` outputs, or None when unreadable."""
    a, b = TIMES_LINE.findall(t0), TIMES_LINE.findall(t1)
    if len(a) < 2 or len(b) < 2:
        return None
    secs = lambda m, s: int(m) * 60 + float(s)  # noqa: E731
    (um0, us0, sm0, ss0), (um1, us1, sm1, ss1) = a[1], b[1]
    return round(secs(um1, us1) - secs(um0, us0), 3), round(secs(sm1, ss1) - secs(sm0, ss0), 3)


def read_record(run: ClientRun, text: bytes) -> None:
    """Fill a remote run's clock, CPU times and histogram from the record its wrapper sent after RECORD."""
    head, sep, hist = text.partition(b"\x1e\n")
    fields = {}
    for line in head.decode(errors="replace").splitlines():
        key, _, value = line.partition(" ")
        fields[key] = value.strip()
    for key in ("started_ms", "ended_ms"):
        if re.fullmatch(r"[0-9]{10,16}", fields.get(key, "")):
            setattr(run, key, int(fields[key]))
    cpu = times_delta(fields.get("t0", ""), fields.get("t1", ""))
    if cpu is not None and min(cpu) >= 0:
        run.user_s, run.system_s = cpu
    if run.hist is not None:
        if sep and hist.strip():
            run.hist.write_bytes(hist)
        else:
            run.hist.unlink(missing_ok=True)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def run_all(state: Clients, runs: list[ClientRun]) -> int | None:
    """Run wrk on every client at once; return the signal that stopped them, or None.

    Every remote client's ssh session is opened first and waits at the start barrier
    (run_script); once all are ready (or READY_TIMEOUT_S passed) one line to each starts
    them, and the local wrk, if any, is started with them. SIGINT and SIGTERM are passed
    on: a local wrk gets the signal, a remote one is killed by its PID over ssh
    (stop_script), one not yet started is kept from starting. Afterwards each remote run's
    record and histogram are split off its raw file (records).
    """
    received: list[int] = []
    stoppers: list[int] = []
    gates: dict[int, int] = {}  # id(run) -> the write end of its session's stdin

    def close_gates() -> None:
        for key in list(gates):
            try:
                os.close(gates.pop(key))
            except OSError:
                pass

    def stop_all() -> None:
        close_gates()  # a wrapper still at the barrier reads end of input and exits
        for run in runs:
            if run.pid is None:
                continue
            if run.client.remote:
                stoppers.append(spawn(state.ssh(run.client.host, f"sh -c {shlex.quote(stop_script(run.client.dir, run.name))}"), None, Path(os.devnull)))
            else:
                try:
                    os.kill(run.pid, received[-1])
                except ProcessLookupError:
                    pass

    def forward(signum, _frame):
        received.append(signum)
        stop_all()

    remote = [run for run in runs if run.client.remote]
    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        for run in runs:
            if run.hist is not None:
                run.hist.unlink(missing_ok=True)  # only this wrk's own file may be recorded
        for run in remote:
            if received:
                break
            script = run_script(run.client.dir, run.name, run.argv, run.hist is not None)
            read_end, write_end = os.pipe()
            gates[id(run)] = write_end
            try:
                run.pid = spawn(state.ssh(run.client.host, f"sh -c {shlex.quote(script)}", stdin=True), run.out, run.err, stdin=read_end)
            finally:
                os.close(read_end)
        wait_ready(remote, lambda: bool(received))
        for run in runs:
            if received:
                break
            run.started_ms = now_ms()
            if run.client.remote:
                if id(run) in gates:
                    os.write(gates[id(run)], b"go\n")
            else:
                run.pid = spawn(run.argv, run.out, run.err, {HIST_ENV: str(run.hist)} if run.hist else {})
        close_gates()
        if received:
            stop_all()  # one started between the signal and its PID being known
        for run in runs:
            if run.pid is None:
                continue
            _, status, rusage = os.wait4(run.pid, 0)
            run.ended_ms = now_ms()
            code = os.waitstatus_to_exitcode(status)
            run.status = 128 - code if code < 0 else code
            if not run.client.remote:
                run.user_s, run.system_s = round(rusage.ru_utime, 3), round(rusage.ru_stime, 3)
        for pid in stoppers:
            os.waitpid(pid, 0)
    finally:
        close_gates()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if received:
        return received[-1]
    for run in remote:
        split_record(run)
    for run in runs:
        if run.out is not None and run.err.exists():
            with open(run.out, "ab") as f:
                f.write(run.err.read_bytes().replace(READY, b"", 1) if run.client.remote else run.err.read_bytes())
    return None


def wait_ready(runs: list[ClientRun], stopped) -> None:
    """Wait until every remote session says READY on stderr, has exited, or READY_TIMEOUT_S passed."""
    waiting = [run for run in runs if run.pid is not None]
    deadline = time.monotonic() + READY_TIMEOUT_S
    while waiting and not stopped() and time.monotonic() < deadline:
        still = []
        for run in waiting:
            try:
                ready = READY in run.err.read_bytes()[: len(READY) + 4096]
            except OSError:
                ready = False
            if ready:
                continue
            pid, status = os.waitpid(run.pid, os.WNOHANG)
            if pid == 0:
                still.append(run)
            else:  # it ended before the barrier (ssh failed): reaped here
                code = os.waitstatus_to_exitcode(status)
                run.status, run.pid = (128 - code if code < 0 else code), None
                run.started_ms = run.ended_ms = now_ms()
        waiting = still
        if waiting:
            time.sleep(0.002)


def split_record(run: ClientRun) -> None:
    """Cut the wrapper's record off a remote run's raw file and read it (no record: the session ended early; clock and CPU unknown)."""
    data = run.out.read_bytes() if run.out is not None and run.out.exists() else b""
    text, sep, record = data.partition(RECORD)
    if run.out is not None:
        run.out.write_bytes(text)
    if sep:
        read_record(run, record)
    elif run.hist is not None:
        run.hist.unlink(missing_ok=True)


def wrk_usage(runs: list[ClientRun], threads: int) -> dict:
    """Return cpu.json's processes.wrk for several clients: sums (null when a client's is unknown), pids [], each client's."""
    each = [{"client": r.client.label, "user_s": r.user_s, "system_s": r.system_s} for r in runs]
    known = all(r.user_s is not None and r.system_s is not None for r in runs)
    return {
        "user_s": round(sum(r.user_s for r in runs), 3) if known else None,
        "system_s": round(sum(r.system_s for r in runs), 3) if known else None,
        "pids": [],
        "threads": threads,
        "clients": each,
    }


def start_skew_ms(runs: list[ClientRun]) -> int | None:
    """Return the spread of the clients' start times in ms (on their own clocks), None with one client."""
    starts = [r.started_ms for r in runs if r.started_ms is not None]
    return max(starts) - min(starts) if len(starts) > 1 else None


@dataclass(frozen=True)
class Totals:
    """A measurement's figures added across its clients (what the progress line and the summary need)."""

    requests_per_sec: float | None
    requests: int
    non_2xx_3xx: int
    socket_errors: int


def measurement_files(measurement: dict) -> list[str]:
    """Return a measurement's wrk files: each client's, or its one file."""
    clients = measurement.get("clients")
    if isinstance(clients, list) and clients:
        return [c["file"] for c in clients]
    return [measurement["file"]]


def totals(paths: list[Path]) -> Totals:
    """Return the clients' results added up; raise ParseError when any file is missing or unparsable (never a sum of fewer)."""
    from ..errors import ParseError
    from ..parse import parse_file

    results = []
    for path in paths:
        if not path.is_file():
            raise ParseError(path, None, "missing")
        results.append(parse_file(path))
    rates = [r.requests_per_sec for r in results]
    return Totals(
        requests_per_sec=None if None in rates else sum(rates),
        requests=sum(r.requests for r in results),
        non_2xx_3xx=sum(r.non_2xx_3xx for r in results),
        socket_errors=sum(r.socket_errors for r in results),
    )
