"""Remote clients' measuring: one measurement on every client at once (start barrier, answers read, lost sessions retried), its records and wrk's CPU."""

from __future__ import annotations

import os
import re
import select
import shlex
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from ..app_options import redact_argv
from ..cpu import exit_status
from .agent import END_MARK, HIST_ENV, READY, RECORD, STDERR_MARK, sh_words, stop_script
from .session import END_MARGIN_S, READY_TIMEOUT_S, SESSIONS, ClientSession
from .state import Client, Clients

TIMES_LINE = re.compile(r"(\d+)m([0-9.]+)s\s+(\d+)m([0-9.]+)s")
WRK_DEFAULT_S = 10.0  # wrk's duration without -d


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
    generator: str = "wrk"  # or "vegeta": its stdout is its binary results, CSV-encoded on a remote client, never mixed with its stderr
    duration_s: float | None = None  # how long it runs (None: wrk's -d)

    @property
    def command(self) -> str:
        """Return the command as recorded: an --app-header secret redacted."""
        return " ".join(redact_argv(self.argv))


def run_line(run: ClientRun) -> str:
    """Return the agent's command line for one wrk run."""
    mode = "v" if run.generator == "vegeta" else "1" if run.hist is not None else "0"
    return "run " + sh_words([run.name, mode, *run.argv])


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


def run_seconds(run: ClientRun) -> float:
    """Return how long a client's load generator runs: its duration_s, else wrk's -d."""
    return run.duration_s if run.duration_s is not None else wrk_duration_s(run.argv)


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
            stoppers.append(
                spawn(state.ssh(run.client.host, f"sh -c {shlex.quote(stop_script(run.client.dir, run.name))}"), None, Path(os.devnull))
            )

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
        if run.out is not None and run.err.exists() and run.generator == "wrk":
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
            for run in waiting.values():
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
    deadlines = {id(run): time.monotonic() + run_seconds(run) + END_MARGIN_S for run in remote}
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
            lose(by_id[key], f"no answer {run_seconds(by_id[key]) + END_MARGIN_S:g}s after {by_id[key].generator} started", ended=False)
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
