"""Remote clients' sessions: one long-lived ssh session per client running the agent, for the whole `serve`."""

from __future__ import annotations

import os
import shlex
import subprocess

from .agent import END_MARK, agent_script
from .state import Client, Clients

READY_TIMEOUT_S = 30.0  # how long the clients' ssh sessions may take to be ready
MARK_BYTES = 64  # longer than an end marker: where a search resumes, so a marker split between reads is found
END_MARGIN_S = 15.0  # how long past wrk's -d an answer may take before its session counts as lost


class ClientSession:
    """The agent (agent_script) on one remote client over the run's ssh master: one line per wrk run, answered up to END_MARK."""

    def __init__(self, state: Clients, client: Client):
        self.client = client
        argv = state.ssh(client.host, f"sh -c {shlex.quote(agent_script(client.dir))}", stdin=True)
        # Its own session: a Ctrl-C at the terminal reaches this helper (which stops wrk), not the ssh carrying the answer.
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
        self.buffer = bytearray()  # grown in place: a fixed-rate answer is megabytes of CSV
        self.scanned = 0  # how far take_answer has looked for the end marker
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
        match = END_MARK.search(self.buffer, max(0, self.scanned - MARK_BYTES))
        if not match:
            self.scanned = len(self.buffer)  # each byte looked at about once, however many reads an answer takes
            return None
        answer, self.buffer, self.scanned = bytes(self.buffer[: match.start()]), self.buffer[match.end() :], 0
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
