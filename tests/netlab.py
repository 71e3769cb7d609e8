"""Test hosts in network namespaces: a controller and N hosts on one bridge, each host running its own sshd.

Issue 12's tests need "another machine" reachable over ssh without anything leaving this
one. A `Lab` makes, as root:

- a controller namespace `<prefix>-ctl` holding a bridge `br0` with address 10.231.X.1/24;
- per host a namespace `<prefix>-<i>` joined to the bridge by a veth pair (created inside
  the namespaces, so no interface ever appears in the host's own namespace), address
  10.231.X.(i+1), `lo` up (the servers' 127.0.0.1 and Unix sockets stay per host);
- per host a private mount namespace for its sshd: tmpfs on /run (with /run/sshd and the
  host's keys) and on /tmp, an /etc/passwd bind-mounted from a copy that adds the
  privilege-separation user `sshd` (and `user`, a non-root login; the real /etc is never
  written), and tmpfs over each directory in `hide` (the checkout), an empty file over each
  file there (a tool made missing), so the host sees neither the controller's /tmp nor the
  checkout: what the driver needs there it must copy;
- optionally a `banner` every login prints before the command's output (ForceCommand);
- one ed25519 client key and an ssh config file (`Host <name>` per host, `User root`,
  that key, no known-hosts file) for `ssh -F`.

`down()` kills every process left in the namespaces and deletes them; it is safe to call
twice. The sshd comes from Debian's openssh-server: /usr/sbin/sshd when installed, else
the package extracted by run_tests.sh into SSHD_CACHE (not installed: installing it would
start a system-wide sshd on 0.0.0.0:22).

Manual use: `python tests/netlab.py up 2` prints the ssh config path and addresses and
waits for Enter before tearing the lab down. `python tests/netlab.py sweep FILE` deletes the
namespaces FILE lists (session_labs: ./run_tests.sh's last step, however the run ended).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

USER_ID = 4242  # the lab's non-root login (Lab.user): no such uid on the machine itself matters, its files are in the lab's tmpfs
SSHD_CACHE = Path(os.environ.get("WRKREPORT_SSHD_CACHE", Path.home() / ".cache" / "wrkreport" / "openssh-server"))
SYSTEM_SSHD = Path("/usr/sbin/sshd")
LIB_DIR = "usr/lib/x86_64-linux-gnu"


def sshd_paths() -> tuple[Path, Path | None] | None:
    """Return (sshd binary, extra library dir or None), or None when no sshd is at hand."""
    if SYSTEM_SSHD.exists():
        return SYSTEM_SSHD, None
    extracted = SSHD_CACHE / "root" / "usr" / "sbin" / "sshd"
    if extracted.exists():
        return extracted, SSHD_CACHE / "root" / LIB_DIR
    return None


def missing() -> str | None:
    """Return why a lab cannot be made here, or None."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None:
        return "no ip command (iproute2)"
    if shutil.which("unshare") is None:
        return "no unshare command (util-linux)"
    if sshd_paths() is None:
        return f"no sshd: neither {SYSTEM_SSHD} nor {SSHD_CACHE} (run_tests.sh extracts Debian's openssh-server there)"
    return None


def sh(*argv: str, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
    """Run a command, capturing its output; raise with its stderr when it fails and check is set."""
    done = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.strip()}")
    return done


@dataclass
class Host:
    """One test host: its namespace, address, ssh name and the sshd process serving it."""

    name: str
    netns: str
    address: str
    sshd: subprocess.Popen | None = None
    log: Path | None = None

    @property
    def ssh(self) -> str:
        """Return the `user@address` to give run_bench.sh."""
        return f"root@{self.address}"


@dataclass
class Lab:
    """A controller namespace and `count` host namespaces on one bridge, each host with an sshd."""

    count: int = 1
    hide: tuple[str, ...] = ()
    banner: str = ""  # printed before every command's output, as by an `echo` in ~/.bashrc (sshd's ForceCommand)
    user: str = ""  # a non-root login on every host (uid and gid USER_ID, home in the host's private /run)
    prefix: str = field(default_factory=lambda: f"wl{os.getpid() % 100000}")
    hosts: list[Host] = field(default_factory=list)
    work: Path | None = None
    subnet: str = ""

    @property
    def controller(self) -> str:
        """Return the controller namespace's name (run the driver in it)."""
        return f"{self.prefix}-ctl"

    @property
    def controller_address(self) -> str:
        return f"{self.subnet}.1"

    @property
    def ssh_config(self) -> Path:
        return self.work / "ssh_config"

    @property
    def key(self) -> Path:
        return self.work / "id_ed25519"

    def namespaces(self) -> list[str]:
        """Return every namespace of the lab, controller first."""
        return [self.controller] + [f"{self.prefix}-{i}" for i in range(1, self.count + 1)]

    def up(self) -> Lab:
        """Make the namespaces, the links, the keys and start each host's sshd; tear down on failure."""
        self.subnet = f"10.231.{os.getpid() % 200 + 20}"
        self.work = Path(tempfile.mkdtemp(prefix="wrkreport-lab."))
        registered(self.namespaces())
        try:
            self._network()
            self._keys()
            for i in range(1, self.count + 1):
                self.hosts.append(self._host(i))
            self._write_ssh_config()
            for host in self.hosts:
                self._wait_sshd(host)
        except BaseException:
            self.down()
            raise
        return self

    def _network(self) -> None:
        ctl = self.controller
        sh("ip", "netns", "add", ctl)
        sh("ip", "-n", ctl, "link", "add", "br0", "type", "bridge")
        sh("ip", "-n", ctl, "addr", "add", f"{self.controller_address}/24", "dev", "br0")
        sh("ip", "-n", ctl, "link", "set", "lo", "up")
        sh("ip", "-n", ctl, "link", "set", "br0", "up")
        for i in range(1, self.count + 1):
            ns = f"{self.prefix}-{i}"
            sh("ip", "netns", "add", ns)
            sh("ip", "-n", ctl, "link", "add", f"v{i}", "type", "veth", "peer", "name", "eth0", "netns", ns)
            sh("ip", "-n", ctl, "link", "set", f"v{i}", "master", "br0")
            sh("ip", "-n", ctl, "link", "set", f"v{i}", "up")
            sh("ip", "-n", ns, "addr", "add", f"{self.subnet}.{i + 1}/24", "dev", "eth0")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
            sh("ip", "-n", ns, "link", "set", "eth0", "up")

    def _keys(self) -> None:
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "wrkreport-lab", "-f", str(self.key))

    def _host(self, i: int) -> Host:
        """Prepare host i's sshd files and start it in its namespace, in a private mount namespace."""
        host = Host(name=f"host-{i}", netns=f"{self.prefix}-{i}", address=f"{self.subnet}.{i + 1}")
        files = self.work / host.name
        files.mkdir()
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(files / "host_key"))
        shutil.copy(self.key.with_suffix(".pub"), files / "authorized_keys")
        if self.banner:  # a chatty login: the banner, then the command the client asked for
            (files / "banner.sh").write_text(f'echo {quote(self.banner)}\nexec /bin/sh -c "$SSH_ORIGINAL_COMMAND"\n')
        passwd = Path("/etc/passwd").read_text()
        if not any(line.startswith("sshd:") for line in passwd.splitlines()):
            passwd += "sshd:x:74:65534:privilege separation:/run/sshd:/usr/sbin/nologin\n"
        if self.user:
            passwd += f"{self.user}:x:{USER_ID}:{USER_ID}:wrkreport lab user:/run/lab/home:/bin/sh\n"
        (files / "passwd").write_text(passwd)
        (files / "sshd_config").write_text(
            f"ListenAddress {host.address}:22\n"
            "HostKey /run/lab/host_key\n"
            "AuthorizedKeysFile /run/lab/authorized_keys\n"
            "PermitRootLogin prohibit-password\n"
            "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
            "StrictModes no\nMaxSessions 64\nMaxStartups 64:30:128\nPidFile none\n"
            + ("ForceCommand /bin/sh /run/lab/banner.sh\n" if self.banner else "")
        )
        binary, libs = sshd_paths()
        shutil.copy(binary, files / "sshd")
        if libs is not None:
            shutil.copytree(libs, files / "lib")
        (files / "empty").write_text("")  # a file hidden: an empty file that is not executable bound over it
        hide = " ".join(
            f"mount --bind /run/lab/empty {quote(path)} &&" if os.path.isfile(path) else f"mount -t tmpfs tmpfs {quote(path)} &&"
            for path in self.hide
        )
        script = (
            "set -e; mount -t tmpfs tmpfs /run && mkdir -p /run/sshd /run/lab && chmod 0755 /run/sshd && "
            f"cp -a {quote(str(files))}/. /run/lab/ && "
            + (f"mkdir -p /run/lab/home && chown {USER_ID}:{USER_ID} /run/lab/home && " if self.user else "")
            +
            # the checkout first: it may be under /tmp, which hides it too but then has no mount point for it
            f"mount --bind /run/lab/passwd /etc/passwd && {hide} mount -t tmpfs tmpfs /tmp && "
            "exec env LD_LIBRARY_PATH=/run/lab/lib /run/lab/sshd -D -e -f /run/lab/sshd_config"
        )
        host.log = files / "sshd.log"
        with open(host.log, "wb") as log:
            host.sshd = subprocess.Popen(
                ["ip", "netns", "exec", host.netns, "unshare", "-m", "--propagation", "private", "sh", "-c", script],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        return host

    def _write_ssh_config(self) -> None:
        lines = []
        for host in self.hosts:
            lines += [f"Host {host.address} {host.name}", f"  HostName {host.address}"]
        lines += [
            "Host *",
            "  User root",
            f"  IdentityFile {self.key}",
            "  IdentitiesOnly yes",
            "  StrictHostKeyChecking no",
            "  UserKnownHostsFile /dev/null",
            "  LogLevel ERROR",
            "  BatchMode yes",
            "  ConnectTimeout 5",
        ]
        self.ssh_config.write_text("\n".join(lines) + "\n")

    def _wait_sshd(self, host: Host, timeout_s: float = 10.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if host.sshd.poll() is not None:
                raise RuntimeError(f"sshd of {host.name} exited: {host.log.read_text(errors='replace')[-500:]}")
            done = self.ssh(host, "true", check=False, timeout=10)
            if done.returncode == 0:
                return
            time.sleep(0.1)
        raise RuntimeError(f"sshd of {host.name} did not answer in {timeout_s}s: {host.log.read_text(errors='replace')[-500:]}")

    def in_controller(self, *argv: str) -> list[str]:
        """Return argv prefixed to run in the controller namespace."""
        return ["ip", "netns", "exec", self.controller, *argv]

    def ssh(
        self, host: Host, command: str, check: bool = True, timeout: float = 60, user: str | None = None
    ) -> subprocess.CompletedProcess:
        """Run a shell command on a host over ssh from the controller namespace (as root, or as user)."""
        destination = f"{user}@{host.address}" if user else host.address
        return sh(*self.in_controller("ssh", "-F", str(self.ssh_config), destination, command), check=check, timeout=timeout)

    def pids(self, netns: str) -> list[int]:
        """Return the PIDs of every process in a namespace."""
        done = sh("ip", "netns", "pids", netns, check=False)
        return [int(p) for p in done.stdout.split()]

    def leftovers(self) -> dict[str, list[str]]:
        """Return, per namespace, the command lines of processes other than the lab's own sshd listeners."""
        own = {h.sshd.pid for h in self.hosts if h.sshd is not None}
        found: dict[str, list[str]] = {}
        for ns in self.namespaces():
            for pid in self.pids(ns):
                if pid in own or parent_of(pid) in own:
                    continue
                cmd = command_line(pid)
                if cmd.startswith("sshd: ") or not cmd:
                    continue  # a session of the lab's sshd still closing, or gone
                found.setdefault(ns, []).append(f"{pid} {cmd}")
        return found

    def down(self) -> None:
        """Kill every process in the namespaces, delete them and the lab's files."""
        for ns in reversed(self.namespaces()):
            for sig in (signal.SIGTERM, signal.SIGKILL):
                pids = self.pids(ns)
                for pid in pids:
                    try:
                        os.kill(pid, sig)
                    except ProcessLookupError:
                        pass
                if pids:
                    time.sleep(0.2)
        for host in self.hosts:
            if host.sshd is not None:
                try:
                    host.sshd.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    host.sshd.kill()
        for ns in reversed(self.namespaces()):
            sh("ip", "netns", "del", ns, check=False)
        if self.work is not None:
            shutil.rmtree(self.work, ignore_errors=True)

    def __enter__(self) -> Lab:
        return self.up()

    def __exit__(self, *exc) -> None:
        self.down()


SESSION_VARIABLE = "WRKREPORT_TEST_SESSION"  # as helpers.SESSION_VARIABLE (./run_tests.sh sets it for its whole run)


def session_labs() -> Path | None:
    """Return the file listing the namespaces of this test session's labs, or None outside a session (manual use)."""
    session = os.environ.get(SESSION_VARIABLE, "")
    return Path("/tmp") / f"wrkreport-test-labs.{session}" if session.isalnum() else None


def registered(namespaces: list[str]) -> None:
    """Add namespaces to the session's list before they are made: a test process killed before its lab's down()
    leaves them for `sweep`, which ./run_tests.sh calls however it ends."""
    path = session_labs()
    if path is not None:
        with open(path, "a") as listing:
            listing.write("".join(f"{ns}\n" for ns in namespaces))


def sweep(listing: Path) -> list[str]:
    """Kill every process in each namespace the listing names that still exists, delete it; return the names deleted."""
    if not listing.is_file():
        return []
    present = set(sh("ip", "netns", "list", check=False).stdout.split())
    swept = []
    for ns in dict.fromkeys(listing.read_text().split()):
        if ns not in present:
            continue
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in sh("ip", "netns", "pids", ns, check=False).stdout.split():
                try:
                    os.kill(int(pid), sig)
                except (ProcessLookupError, ValueError):
                    pass
            time.sleep(0.2)
        sh("ip", "netns", "del", ns, check=False)
        swept.append(ns)
    listing.unlink(missing_ok=True)
    return swept


def quote(text: str) -> str:
    """Return text quoted for sh."""
    return "'" + text.replace("'", "'\\''") + "'"


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def parent_of(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "sweep":
        swept = sweep(Path(argv[1]))
        if swept:
            print(f"netlab: deleted namespaces left behind: {' '.join(swept)}", file=sys.stderr)
        return 0
    if len(argv) < 1 or argv[0] != "up":
        print(__doc__)
        return 2
    why = missing()
    if why:
        print(f"netlab: {why}", file=sys.stderr)
        return 2
    with Lab(count=int(argv[1]) if len(argv) > 1 else 1) as lab:
        print(f"controller namespace {lab.controller} ({lab.controller_address}); ssh config {lab.ssh_config}")
        for host in lab.hosts:
            print(f"{host.name}: {host.ssh} in namespace {host.netns}")
        print(f"e.g. ip netns exec {lab.controller} ssh -F {lab.ssh_config} {lab.hosts[0].address} hostname")
        input("Enter tears the lab down ")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
