"""Clients: wrk on every --client-hosts machine at once, over the run's ssh masters (preflight, work dirs, agents, start, stop, records).

The driver's state for the clients lives in one JSON file in the script's private work
dir (`clients-preflight --save F`, then `--clients F` for `warm-up` and `measure`, and
`clients-down --state F` in the cleanup): the ssh options, and per client its label
(`client-1`, ...), its host (`local` or `[user@]host`), the private directory made there
with `mktemp -d` (histogram.lua copied into it once), what remote.py read of it and the
RTT to the target. On a remote client wrk runs under a small POSIX sh agent
(`agent_script`) kept on one ssh session for the whole `serve` (ClientSession: a new
session runs the login shell's rc files, tenths of a second between measurements): one
line per measurement, answered with wrk's stdout, the record (start and end on that
host's clock, CPU time from `times`), the histogram and wrk's stderr, then an end marker
carrying the exit status. The agent records wrk's PID so it can be killed by PID over a
new session (wrk keeps running when its ssh session closes). Nothing here prints: the
subcommands in __main__ do.
"""

from __future__ import annotations

import json
import os
import re
import select
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from .cpu import exit_status
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
AGENT = "wrkreport-agent"  # the first line of agent_script: how down_script knows an agent's PID is still one
RECORD = b"\x1ewrkreport-record\n"  # after wrk's stdout: the agent's record, then an RS line, then the histogram
READY = b"wrkreport-client-ready\n"  # an agent's line for a run: waiting for the start line
STDERR_MARK = b"\x1ewrkreport-stderr\n"  # after the histogram: wrk's stderr
END_MARK = re.compile(rb"\x1ewrkreport-end (-?[0-9]+)\n")  # the last line of an answer: wrk's exit status
READY_TIMEOUT_S = 30.0  # how long the clients' ssh sessions may take to be ready
END_MARGIN_S = 15.0  # how long past wrk's -d an answer may take before its session counts as lost
WRK_DEFAULT_S = 10.0  # wrk's duration without -d


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


def agent_script(workdir: str) -> str:
    """Return the agent kept running on a client for the whole run: one `run NAME HIST WRK ARGS...` line per wrk run.

    It reads its input with the `read` builtin only, from fd 3 (a pipe is read byte by
    byte, so a start line is never taken from the next command; everything else it starts
    gets /dev/null). A `run` line is sh words (sh_words), evaluated as a call of `run`:
    say READY, wait for the start line (`go`; anything else or end of input means stop),
    then run wrk: PID in NAME.pid (stop_script kills it), NAME.stop seen
    before and right after the PID is written, its CPU by `times` around it, stdout and
    stderr in files. The answer: wrk's stdout, RECORD and the record, RS, the histogram,
    STDERR_MARK and wrk's stderr, then the end marker with the exit status (a stopped run:
    the end marker alone). Its PID is in agent.PID.pid, so down_script can end an agent
    left reading a session the link lost.
    """
    return f"""# {AGENT}
cd {shlex.quote(workdir)} || exit 125
exec 3<&0 </dev/null
echo $$ > agent.$$.pid
trap 'rm -f agent.$$.pid' EXIT
NL='
'
run() {{
  n=$1 h=$2
  shift 2
  s=143
  if [ ! -e "$n.stop" ]; then
    echo {READY.decode().strip()}
    IFS= read -r go <&3 || go=
    if [ "$go" = go ] && [ ! -e "$n.stop" ]; then
      a=$(date -u +%s%3N 2>/dev/null)
      times > "$n.t0"
      if [ "$h" = 1 ]; then
        {HIST_ENV}="$PWD/$n.hist.json" "$@" > "$n.out" 2> "$n.err" 3<&- &
      else
        "$@" > "$n.out" 2> "$n.err" 3<&- &
      fi
      w=$!
      echo "$w" > "$n.pid"
      [ -e "$n.stop" ] && kill -TERM "$w"
      wait "$w"
      s=$?
      times > "$n.t1"
      b=$(date -u +%s%3N 2>/dev/null)
      cat "$n.out"
      printf '\\036wrkreport-record\\nstarted_ms %s\\nended_ms %s\\nstatus %s\\n' "$a" "$b" "$s"
      printf 't0 '; tr '\\n' ' ' < "$n.t0"; echo
      printf 't1 '; tr '\\n' ' ' < "$n.t1"; echo
      printf '\\036\\n'
      [ "$h" = 1 ] && cat "$n.hist.json" 2>/dev/null
      printf '\\036wrkreport-stderr\\n'
      cat "$n.err"
    fi
  fi
  rm -f -- "$n".*
  printf '\\036wrkreport-end %s\\n' "$s"
}}
while IFS= read -r line <&3; do
  case $line in
    'run '*) eval "$line" ;;
  esac
done
"""


def sh_words(words: list[str]) -> str:
    """Return words as one line of sh words for the agent's eval: ['a b', "it's"] -> 'a b' 'it'"'"'s' (a newline becomes "$NL")."""
    return " ".join(shlex.quote(word).replace("\n", "'\"$NL\"'") for word in words)


def run_line(run: "ClientRun") -> str:
    """Return the agent's command line for one wrk run."""
    return "run " + sh_words([run.name, "1" if run.hist is not None else "0", *run.argv])


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
    """Return the script stopping every wrk recorded in workdir, then any agent left there (a lost session's waits for hours), then removing it."""
    d = shlex.quote(workdir)
    return (
        f"cd {d} 2>/dev/null || exit 0\nfor f in *.pid; do\n  [ -f \"$f\" ] || continue\n  case $f in agent.*) continue ;; esac\n"
        "  : > \"${f%.pid}.stop\"\n"
        + "".join("  " + line + "\n" for line in kill_lines('"$f"').splitlines())
        + "done\nfor f in agent.*.pid; do\n  [ -f \"$f\" ] || continue\n  p=$(cat \"$f\" 2>/dev/null)\n"
        "  case \"$p\" in ''|*[!0-9]*) continue ;; esac\n"
        f"  tr '\\0' ' ' < /proc/$p/cmdline 2>/dev/null | grep -q {AGENT} && kill -TERM \"$p\" 2>/dev/null && kill -CONT \"$p\" 2>/dev/null\n"
        f"done\ncd / && rm -rf -- {d}\n"
    )


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


def spawn(argv: list[str], out: Path | None, err: Path, env: dict | None = None) -> int:
    """Start argv with stdin from /dev/null, stdout to out (or /dev/null), stderr to err; return its PID."""
    null = os.open(os.devnull, os.O_RDWR)
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


def wrk_duration_s(argv: list[str]) -> float:
    """Return how long wrk runs by its -d/--duration: '-d30s' -> 30.0, '-d', '2m' -> 120.0; WRK_DEFAULT_S without one."""
    for i, arg in enumerate(argv):
        if arg in ("-d", "--duration"):
            value = argv[i + 1] if i + 1 < len(argv) else ""
        elif arg.startswith("--duration="):
            value = arg.partition("=")[2]
        elif arg.startswith("-d") and not arg.startswith("--"):
            value = arg[2:]
        else:
            continue
        match = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)([smhSMH]?)", value.strip())
        if match:
            return float(match[1]) * {"": 1, "s": 1, "m": 60, "h": 3600}[match[2].lower()]
    return WRK_DEFAULT_S


class ClientSession:
    """The agent (agent_script) on one remote client over the run's ssh master: one line per wrk run, answered up to END_MARK."""

    def __init__(self, state: Clients, client: Client):
        self.client = client
        argv = state.ssh(client.host, f"sh -c {shlex.quote(agent_script(client.dir))}", stdin=True)
        # Its own session: a Ctrl-C at the terminal reaches this helper (which stops wrk), not the ssh carrying the answer.
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
        self.buffer = b""
        self.fresh = True  # opened during the current run_all: a failure is not worth a second session

    @property
    def fd(self) -> int:
        return self.proc.stdout.fileno()

    def send(self, line: str) -> bool:
        """Write one line to the agent; return False when its session is gone."""
        try:
            self.proc.stdin.write(line.encode("utf-8", "surrogateescape") + b"\n")
            self.proc.stdin.flush()
        except (OSError, ValueError):
            return False
        return True

    def pull(self) -> bool:
        """Read what the agent sent (select said there is some); return False at the end of its output."""
        try:
            chunk = os.read(self.fd, 65536)
        except OSError:
            chunk = b""
        self.buffer += chunk
        return bool(chunk)

    def take_answer(self) -> tuple[bytes, int] | None:
        """Return the answer read so far up to its end marker and wrk's exit status, or None while it is incomplete."""
        match = END_MARK.search(self.buffer)
        if not match:
            return None
        answer, self.buffer = self.buffer[: match.start()], self.buffer[match.end() :]
        return answer, int(match[1])

    def exit_status(self, wait_s: float) -> int:
        """Return the session's exit status when it failed (waiting up to wait_s for ssh to exit), else 255 (ssh's own failure code)."""
        try:
            code = self.proc.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            code = None
        return code if code is not None and code > 0 else 255

    def close(self) -> None:
        """End the agent (its input closes: it exits at end of input) and the ssh process."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()


class Sessions:
    """The agents this helper has open, per (host, work dir); kept between run_all calls while `keep` (inside `serve`)."""

    def __init__(self) -> None:
        self.open: dict[tuple[str, str | None], ClientSession] = {}
        self.keep = False

    def get(self, state: Clients, client: Client) -> ClientSession:
        """Return the client's open session, or a new one (the first run, or its ssh ended)."""
        session = self.open.get((client.host, client.dir))
        if session is None or session.proc.poll() is not None:
            return self.reopen(state, client)
        return session

    def reopen(self, state: Clients, client: Client) -> ClientSession:
        """Close the client's session, if any, and open a new one."""
        self.drop(client)
        session = self.open[(client.host, client.dir)] = ClientSession(state, client)
        return session

    def drop(self, client: Client) -> None:
        """Close the client's session (one that failed: killed if it does not end at once)."""
        session = self.open.pop((client.host, client.dir), None)
        if session is not None:
            if session.proc.poll() is None:
                session.proc.kill()  # it failed: it owes an answer it will not give
            session.close()

    def close_all(self) -> None:
        """Close every session (the agents end at end of input)."""
        for key in list(self.open):
            self.open.pop(key).close()


SESSIONS = Sessions()


def run_all(state: Clients, runs: list[ClientRun]) -> int | None:
    """Run wrk on every client at once; return the signal that stopped them, or None.

    Every remote client's agent (SESSIONS: opened at the first run, kept while
    SESSIONS.keep) gets the run's line and says READY; once all are ready (or
    READY_TIMEOUT_S passed) a `go` line to each starts them, and the local wrk, if any, is
    started with them. SIGINT and SIGTERM are passed on: a local wrk gets the signal, a
    remote one is killed by its PID over a new ssh session (stop_script), one not yet
    started gets `stop` instead of `go`. Each remote answer is read up to its end marker
    (at most wrk's -d plus END_MARGIN_S: else its session counts as lost, like one that
    ends) and split into the raw file, the stderr file and the record (read_answer).
    """
    received: list[int] = []
    stoppers: list[int] = []
    remote = [run for run in runs if run.client.remote]
    sessions: dict[int, ClientSession] = {}  # id(run) -> its agent, while it owes the run's answer
    started: set[int] = set()  # the remote runs sent `go`
    stopping: set[int] = set()  # the remote runs a stop_script was started for
    answers: dict[int, tuple[bytes, int]] = {}

    def stop_remote(run: ClientRun) -> None:
        if id(run) in started and id(run) not in stopping:
            stopping.add(id(run))
            stoppers.append(spawn(state.ssh(run.client.host, f"sh -c {shlex.quote(stop_script(run.client.dir, run.name))}"), None, Path(os.devnull)))

    def stop_all() -> None:
        for run in runs:
            if run.client.remote:
                stop_remote(run)
            elif run.pid is not None and run.status is None:
                try:
                    os.kill(run.pid, received[-1])
                except ProcessLookupError:
                    pass

    def forward(signum, _frame):
        received.append(signum)
        stop_all()

    def lose(run: ClientRun, why: str, ended: bool = True) -> None:
        session = sessions.pop(id(run))
        run.status = session.exit_status(2.0 if ended else 0.0)  # an ended session's ssh exits at once
        SESSIONS.drop(run.client)
        stop_remote(run)  # a wrk it started may still run there
        run.started_ms = run.started_ms or now_ms()
        run.ended_ms = now_ms()
        answers[id(run)] = (STDERR_MARK + f"wrkreport: {run.client.label} ({run.client.host}): {why}\n".encode(), run.status)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        for run in runs:
            if run.hist is not None:
                run.hist.unlink(missing_ok=True)  # only this wrk's own file may be recorded
        for run in remote:
            if received:
                break
            sessions[id(run)] = SESSIONS.get(state, run.client)
            if not sessions[id(run)].send(run_line(run)) and not retry(state, run, sessions):
                lose(run, "its ssh session ended")
        ready = wait_ready(state, remote, sessions, lose, lambda: bool(received))
        for run in runs:
            if received:
                break
            run.started_ms = now_ms()
            if id(run) in ready:
                started.add(id(run))
                sessions[id(run)].send("go")
            elif not run.client.remote:
                run.pid = spawn(run.argv, run.out, run.err, {HIST_ENV: str(run.hist)} if run.hist else {})
        for run in remote:
            if id(run) in sessions and id(run) not in started:
                sessions[id(run)].send("stop")  # stopped at (or before) the barrier: its agent answers at once
        if received:
            stop_all()  # one started between the signal and its PID being known
        collect(remote, runs, sessions, answers, lose)
        for pid in stoppers:
            os.waitpid(pid, 0)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for session in SESSIONS.open.values():
            session.fresh = False
        if not SESSIONS.keep:
            SESSIONS.close_all()
    if received:
        return received[-1]
    for run in remote:
        answer, run.status = answers[id(run)]
        read_answer(run, answer)
    for run in runs:
        if run.out is not None and run.err.exists():
            with open(run.out, "ab") as f:
                f.write(run.err.read_bytes())
    return None


def retry(state: Clients, run: ClientRun, sessions: dict[int, ClientSession]) -> bool:
    """Send the run's line over a new session when its session ended since an earlier run_all opened it; return whether it went."""
    if sessions[id(run)].fresh:
        return False
    sessions[id(run)] = SESSIONS.reopen(state, run.client)
    return sessions[id(run)].send(run_line(run))


def wait_ready(state: Clients, runs: list[ClientRun], sessions: dict[int, ClientSession], lose, stopped) -> set[int]:
    """Wait until every remote agent says READY, ends its run at once (stopped), ends (retried once) or is silent READY_TIMEOUT_S; return the ready."""
    ready: set[int] = set()
    waiting = {id(run): run for run in runs if id(run) in sessions}
    deadline = time.monotonic() + READY_TIMEOUT_S
    while waiting and not stopped():
        for key in list(waiting):
            session = sessions[key]
            _, sep, rest = session.buffer.partition(READY)
            if sep:
                session.buffer = rest  # before it: what the login shell's rc files may print on a new session
                ready.add(key)
            if sep or END_MARK.search(session.buffer):
                del waiting[key]
        left = deadline - time.monotonic()
        if not waiting:
            break
        if left <= 0:
            for key, run in waiting.items():
                lose(run, f"its agent was not ready in {READY_TIMEOUT_S:g}s", ended=False)
            break
        fds = {sessions[key].fd: key for key in waiting}
        for fd in select.select(list(fds), [], [], min(left, 0.1))[0]:
            key = fds[fd]
            if not sessions[key].pull() and not retry(state, waiting[key], sessions):
                lose(waiting.pop(key), "its ssh session ended")
    return ready


def collect(remote: list[ClientRun], runs: list[ClientRun], sessions: dict[int, ClientSession], answers: dict, lose) -> None:
    """Read every remote answer up to its end marker (a session that ends or is silent past wrk's -d plus END_MARGIN_S is lost) and reap the local wrk."""
    deadlines = {id(run): time.monotonic() + wrk_duration_s(run.argv) + END_MARGIN_S for run in remote}
    by_id = {id(run): run for run in remote}
    local = [run for run in runs if not run.client.remote and run.pid is not None]
    while True:
        for key in list(sessions):
            answer = sessions[key].take_answer()
            if answer is not None:
                answers[key] = answer
                by_id[key].ended_ms = now_ms()
                del sessions[key]
        local = [run for run in local if not reap(run, blocking=not sessions)]
        if not sessions and not local:
            return
        now = time.monotonic()
        for key in [k for k in sessions if now > deadlines[k]]:
            lose(by_id[key], f"no answer {wrk_duration_s(by_id[key].argv) + END_MARGIN_S:g}s after wrk started", ended=False)
        fds = {session.fd: key for key, session in sessions.items()}
        for fd in select.select(list(fds), [], [], 0.01 if local else 0.1)[0] if fds else ():
            if not sessions[fds[fd]].pull():
                lose(by_id[fds[fd]], "its ssh session ended during the run")


def reap(run: ClientRun, blocking: bool) -> bool:
    """Collect a local wrk's exit status and CPU time if it has ended (or wait for it); return whether it had."""
    pid, status, rusage = os.wait4(run.pid, 0 if blocking else os.WNOHANG)
    if pid == 0:
        return False
    run.ended_ms = now_ms()
    run.status = exit_status(status)
    run.user_s, run.system_s = round(rusage.ru_utime, 3), round(rusage.ru_stime, 3)
    return True


def read_answer(run: ClientRun, answer: bytes) -> None:
    """Split a remote run's answer into its raw file (wrk's stdout), its stderr file and its record (none: clock, CPU and histogram unknown)."""
    body, _, err = answer.partition(STDERR_MARK)
    text, sep, record = body.partition(RECORD)
    if run.out is not None:
        run.out.write_bytes(text)
    run.err.write_bytes(err)
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
    from ..parsers import parse_file

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
