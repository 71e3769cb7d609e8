"""run_bench.sh over ssh: test hosts in network namespaces (tests/netlab.py); nothing leaves this machine."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import netlab

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "run_bench.sh"
PYTHON_BIN = Path(sys.executable).parent  # where the test command installed wrkreport
pytestmark = [pytest.mark.slow, pytest.mark.skipif(netlab.missing() is not None, reason=str(netlab.missing()))]


@pytest.fixture(scope="module")
def lab():
    with netlab.Lab(count=1, hide=(str(ROOT),)) as made:
        yield made


def driver_last(stderr: str) -> str:
    """Return the last line run_bench.sh printed itself ('[run_bench] ...', or its helper's 'run_bench.sh: ...'): what a
    lab host's shell or tools print over ssh may follow it (once, in a full run: "pyenv: cannot rehash: /root/.pyenv/shims
    isn't writable", this machine's pyenv on a host whose mount namespace hides part of the file system)."""
    return [line for line in stderr.splitlines() if line.startswith(("[run_bench] ", "run_bench.sh: "))][-1]


def run_in_controller(lab, *argv, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run(lab.in_controller(str(SCRIPT), *argv), capture_output=True, text=True, timeout=timeout)


def test_unreachable_server_host_is_a_preflight_error(lab, tmp_path):
    absent = f"root@{lab.subnet}.250"  # on the lab's bridge, no host there
    done = run_in_controller(lab, "--quick", "--server-host", absent, "--ssh-config", str(lab.ssh_config), "--out", str(tmp_path / "raw"))
    assert done.returncode == 2, done.stderr
    last = driver_last(done.stderr)
    assert f"ssh to {absent} failed:" in last and "nothing was started" in last
    assert not (tmp_path / "raw").exists() or not any((tmp_path / "raw").iterdir()), "no run directory for a preflight error"
    assert lab.leftovers() == {}
    masters = subprocess.run(["pgrep", "-af", "ControlMaster=yes"], capture_output=True, text=True).stdout
    assert absent not in masters, "no ssh master left behind"


def test_a_login_that_prints_a_banner_is_refused_with_what_it_printed(tmp_path):
    # Its text would land in every answer read there (mktemp's dir, the facts, wrk's output).
    with netlab.Lab(count=1, hide=(str(ROOT),), banner="Welcome to host-1!", prefix=f"wb{os.getpid() % 100000}") as chatty:
        host = chatty.hosts[0]
        assert chatty.ssh(host, "echo hi").stdout == "Welcome to host-1!\nhi\n"  # the lab's banner works
        done = subprocess.run(
            chatty.in_controller(
                str(SCRIPT), "--quick", "--server-host", host.ssh, "--ssh-config", str(chatty.ssh_config), "--out", str(tmp_path / "raw")
            ),
            capture_output=True,
            text=True,
            timeout=300,
            env=script_env(),
        )
        assert done.returncode == 2, done.stderr
        last = driver_last(done.stderr)
        assert f"ssh {host.ssh} prints 'Welcome to host-1!' before every command's output" in last and "nothing was started" in last
        assert "Traceback" not in done.stderr
        assert not (tmp_path / "raw").exists() or not any((tmp_path / "raw").iterdir())
        assert chatty.leftovers() == {}
        assert (
            chatty.ssh(host, "ls -d /tmp/wrkreport.* 2>/dev/null || true").stdout.strip() == "Welcome to host-1!"
        )  # no work dir made there


def installed(tool: str) -> str:
    """Return the file a tool runs from here (and on the lab's hosts, which share /usr): the one to hide."""
    found = shutil.which(tool, path=os.pathsep.join([os.environ.get("PATH", ""), "/usr/local/sbin", "/usr/sbin", "/sbin"]))
    assert found, f"{tool} is not installed here"
    return os.path.realpath(found)


def run_as_user(lab, out: Path) -> subprocess.CompletedProcess:
    """Run the quick benchmark with the target logged in as the lab's user, not root."""
    return subprocess.run(
        bench_argv(lab, out, login=f"{lab.user}@{lab.hosts[0].address}"), capture_output=True, text=True, timeout=300, env=script_env()
    )


def test_a_target_logged_in_as_a_user_not_root_runs_every_setup(tmp_path):
    # No root there: no apt-get, no raising ulimit -n past its hard limit, nginx's workers as that user.
    with netlab.Lab(count=1, hide=(str(ROOT),), user="bench", prefix=f"wu{os.getpid() % 100000}") as lab:
        done = run_as_user(lab, tmp_path / "raw")
        assert done.returncode == 0, done.stderr[-3000:]
        (run_dir,) = [p for p in (tmp_path / "raw").iterdir() if p.is_dir() and not p.is_symlink()]
        manifest = json.loads((run_dir / "manifest.json").read_text())
        assert manifest["status"] == "complete" and manifest["server_host"]["ssh"] == f"bench@{lab.hosts[0].address}"
        headers = sorted(run_dir.glob("*.headers.txt"))
        assert len(headers) == 8 and all(len(p.read_bytes()) == 141 for p in headers)  # the Unix-socket setup too
        assert len(manifest["measurements"]) == 8
        assert lab.leftovers() == {}
        assert target_work_dirs(lab, lab.user) == []


def test_a_tool_missing_on_a_target_without_root_stops_with_the_apt_get_line(tmp_path):
    # nginx hidden on the host: missing there; a user that is not root cannot install it.
    with netlab.Lab(count=1, hide=(str(ROOT), installed("nginx")), user="bench", prefix=f"wm{os.getpid() % 100000}") as lab:
        done = run_as_user(lab, tmp_path / "raw")
        assert done.returncode == 2, done.stderr[-3000:]
        last = driver_last(done.stderr)
        target = f"bench@{lab.hosts[0].address}"
        assert f"missing on {target}: nginx. Install there with: ssh {target} sudo apt-get install -y nginx-light" in last, last
        assert "nothing was started" in last and "Traceback" not in done.stderr
        assert lab.leftovers() == {}
        assert target_work_dirs(lab, lab.user) == []


def test_wrk_missing_on_a_client_without_root_stops_with_the_install_line(tmp_path):
    # host-1 the target (root), host-2 a client logged in as a user, with no wrk there.
    with netlab.Lab(count=2, hide=(str(ROOT), installed("wrk")), user="bench", prefix=f"wc{os.getpid() % 100000}") as lab:
        target, client = lab.hosts
        argv = lab.in_controller(
            str(SCRIPT),
            "--quick",
            "--server-host",
            target.ssh,
            "--client-hosts",
            f"bench@{client.address}",
            "--ssh-config",
            str(lab.ssh_config),
            "--out",
            str(tmp_path / "raw"),
            "--setups",
            "go-http",
        )
        done = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=script_env())
        assert done.returncode == 2, done.stderr[-3000:]
        last = driver_last(done.stderr)
        assert (
            f"client-1 (bench@{client.address}): wrk is missing and ssh does not log in as root there. Install it there with: sudo apt-get"
            in last
        ), last
        assert "Traceback" not in done.stderr
        assert lab.leftovers() == {}
        assert target_work_dirs(lab) == []


# --- A quick run with the servers on the target --------------------------------------------

TARGET_SETUPS = "go-http,nginx-http,nginx-fcgi-tcp,nginx-fcgi-unix"
TARGET_RATE = 500  # the fixed-rate phase's rate in the quick run over ssh: held anywhere


def script_env() -> dict[str, str]:
    """The suite's environment, this Python's wrkreport first on PATH, no BENCH_* variables.

    The test command installs the package into the Python that runs pytest: a virtualenv
    in ./.venv when the system Python refuses pip, that Python itself otherwise (CI).
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCH_")}
    env["PATH"] = os.pathsep.join([str(PYTHON_BIN), "/usr/local/go/bin", env.get("PATH", "")])
    env["BENCH_SLO"] = "off"  # no capacity search unless a test asks for it (--slo beats BENCH_SLO): target_run does
    return env


def bench_argv(lab, out: Path, *extra: str, login: str | None = None) -> list[str]:
    """Return the quick run with the servers on the lab's first host, logged in as root (or as login)."""
    login = login or lab.hosts[0].ssh
    return lab.in_controller(
        str(SCRIPT),
        "--quick",
        "--server-host",
        login,
        "--ssh-config",
        str(lab.ssh_config),
        "--out",
        str(out),
        "--setups",
        TARGET_SETUPS,
        *extra,
    )


def netns_id(argv_prefix: list[str]) -> str:
    return subprocess.run([*argv_prefix, "readlink", "/proc/self/ns/net"], capture_output=True, text=True, check=True).stdout.strip()


def target_work_dirs(lab, user: str | None = None) -> list[str]:
    """Return the wrkreport work dirs left in the target's private /tmp (seen as root, or as user)."""
    return lab.ssh(lab.hosts[0], "ls -d /tmp/wrkreport.* 2>/dev/null || true", user=user).stdout.split()


def default_sigint() -> None:
    """Give the script SIGINT back (the suite may run in the background, where SIGINT is ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_measurements(run_parent: Path, count: int, proc: subprocess.Popen, timeout_s: float = 120) -> dict:
    """Wait until the run's manifest lists `count` measurements; return it."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        manifests = list(run_parent.glob("*/manifest.json"))
        if manifests:
            try:
                manifest = json.loads(manifests[0].read_text())
            except ValueError:
                manifest = {"measurements": []}  # being replaced
            if len(manifest["measurements"]) >= count:
                return manifest
        time.sleep(0.1)
    raise AssertionError(f"fewer than {count} measurements within {timeout_s}s")


@pytest.fixture(scope="module")
def target_run(lab, tmp_path_factory):
    """One quick run from the controller namespace with the servers on host-1; (result, run dir, wall s)."""
    out = tmp_path_factory.mktemp("ssh-run") / "raw"
    started = time.monotonic()
    done = subprocess.run(
        bench_argv(
            lab, out, "--rates", str(TARGET_RATE), "--slo", "p99=10ms", "--gomaxprocs", "1"
        ),  # restarts per value: the other runs here
        capture_output=True,
        text=True,
        timeout=300,
        env=script_env(),
    )
    wall = time.monotonic() - started
    print(f"quick run over ssh: {wall:.1f}s wall")  # a timing, printed, never asserted
    runs = [p for p in out.iterdir() if p.is_dir() and not p.is_symlink()] if out.exists() else []
    return done, (runs[0] if runs else None), wall


def test_quick_run_with_the_servers_on_the_target(lab, target_run):
    done, run_dir, _ = target_run
    assert done.returncode == 0, done.stderr[-4000:]
    assert "Traceback" not in done.stderr
    manifest = json.loads((run_dir / "manifest.json").read_text())
    host = lab.hosts[0]
    assert manifest["status"] == "complete"
    assert manifest["parameters"]["server_host"] == host.ssh
    assert manifest["parameters"]["server_address"] == host.address  # from $SSH_CONNECTION there
    assert set(manifest["parameters"]["urls"].values()) == {f"http://{host.address}:{p}/" for p in (8080, 8081, 8082, 8083)}
    # Every header capture, taken from the controller against the target's address: 141 bytes.
    headers = sorted(run_dir.glob("*.headers.txt"))
    assert len(headers) == len(TARGET_SETUPS.split(",")) == 4  # one per setup, GOMAXPROCS=1 only
    for path in headers:
        assert len(path.read_bytes()) == 141, path.name
    # The servers ran in the target's network namespace, not the controller's.
    server = manifest["server_host"]
    target_ns = netns_id(["ip", "netns", "exec", host.netns])
    assert server["net_ns"] == target_ns
    assert server["net_ns"] != netns_id(lab.in_controller())
    assert server["ssh"] == host.ssh and server["address"] == host.address
    assert server["machine"]["logical_cores"] >= 1 and server["versions"]["nginx"]
    (rtt,) = manifest["network"]["rtt"]
    assert rtt["from"] == "local" and rtt["to"] == host.address and rtt["samples"] == 10
    assert 0 < rtt["min_ms"] <= rtt["median_ms"] <= rtt["max_ms"]
    # CPU read on the target: non-zero for the servers each setup uses.
    assert len(manifest["measurements"]) == 4 and manifest["parameters"]["gomaxprocs"] == [1]
    for entry in manifest["measurements"]:
        cpu = json.loads((run_dir / entry["cpu_file"]).read_text())
        assert cpu["host"] == "target"
        assert cpu["logical_cores"] == server["machine"]["logical_cores"]
        for name in ("go", "nginx") if entry["setup"] != "go-http" else ("go",):
            used = cpu["processes"][name]
            assert used and used["user_s"] + used["system_s"] > 0, (entry["file"], name, used)
        assert "Requests/sec" in (run_dir / entry["file"]).read_text()
    # Listening on the target's address only: nginx's listen lines, Go's public listener,
    # and that address exists in the target's namespace alone (so wrk reached it there).
    conf = (run_dir / "nginx.conf").read_text()
    assert re.findall(r"^\s*listen (\S+);", conf, re.M) == [f"{host.address}:{p}" for p in (8081, 8082, 8083)]
    assert re.search(r"upstream go_http \{\s*server 127\.0\.0\.1:8080;", conf), "nginx's backend stays on the target's loopback"
    go_log = (run_dir / "logs" / "go.gomaxprocs-1.log").read_text()
    assert "http=127.0.0.1:8080" in go_log and f"http-public={host.address}:8080" in go_log
    controller_addrs = subprocess.run(lab.in_controller("ip", "-o", "addr"), capture_output=True, text=True).stdout
    assert f" {host.address}/" not in controller_addrs
    assert f" {host.address}/" in subprocess.run(["ip", "-n", host.netns, "-o", "addr"], capture_output=True, text=True).stdout
    # Nothing left on either machine; the target's work dir removed.
    assert lab.leftovers() == {}
    assert target_work_dirs(lab) == []


def test_the_fixed_rate_phase_runs_here_against_the_target_with_its_cpu_read_there(lab, target_run):
    done, run_dir, _ = target_run
    assert done.returncode == 0, done.stderr[-4000:]
    manifest = json.loads((run_dir / "manifest.json").read_text())
    host, cores = lab.hosts[0], manifest["server_host"]["machine"]["logical_cores"]
    entries = manifest["fixed_rate_measurements"]
    cells = {(s, n) for s in TARGET_SETUPS.split(",") for n in manifest["parameters"]["gomaxprocs"]}
    assert {(e["setup"], e["gomaxprocs"]) for e in entries if e["rate"] == TARGET_RATE and "search_high" not in e} == cells
    assert {(e["setup"], e["gomaxprocs"]) for e in entries if "search_high" in e} == cells, "the capacity search ran against the target too"
    from wrkreport.parsers.vegeta import read_vegeta_file

    seconds: dict[tuple[str, str], float] = {}  # each setup's servers' CPU over its measurements
    for entry in entries:
        assert entry["url"].startswith(f"http://{host.address}:") and "problem" not in entry, entry
        assert (
            "client" not in entry and f" -rate {entry['rate']}/1s " in entry["command"]
        ), "vegeta ran here, as wrk does with --server-host"
        cpu = json.loads((run_dir / entry["cpu_file"]).read_text())
        assert cpu["host"] == "target" and cpu["logical_cores"] == cores, "the servers' CPU read on the target, over the helper's session"
        for name in ("go", "nginx") if entry["setup"] != "go-http" else ("go",):
            used = cpu["processes"][name]
            assert used and used["pids"] and used["user_s"] >= 0 and used["system_s"] >= 0, (entry["file"], name, used)
            key = (entry["setup"], name)
            seconds[key] = seconds.get(key, 0.0) + used["user_s"] + used["system_s"]
        assert cpu["processes"]["wrk"]["pids"] and cpu["processes"]["wrk"]["user_s"] + cpu["processes"]["wrk"]["system_s"] > 0
        result = read_vegeta_file(run_dir / entry["file"], entry["rate"])
        assert result.requests > 0, entry["file"]
        assert "search_high" in entry or result.status_count(200) == result.requests, entry["file"]  # a step past the knee may time out
        print(
            f"{entry['setup']} GOMAXPROCS={entry['gomaxprocs']} at {entry['rate']} req/s on the target: achieved {result.achieved_rps:.1f}, "
            f"p50 {result.p50_ms:.3f} ms, p99 {result.p99_ms:.3f} ms"
        )
    # each setup's servers used CPU over its measurements: one 1-s attack at 500 req/s costs nginx about 10 ms, the clock
    # tick /proc counts in, so one measurement alone may read 0.00 s (CI saw nginx-fcgi-tcp's three nginx processes at 0.0)
    assert seconds and all(used > 0 for used in seconds.values()), seconds
    passes = manifest["fixed_rate_passes"]
    assert passes and all(p["pids"]["go"] and all(c["header_bytes"] == 141 for c in p["cells"].values()) for p in passes)


def test_wrkreport_builds_the_run_from_the_target(target_run, tmp_path):
    done, run_dir, _ = target_run
    assert done.returncode == 0
    built = subprocess.run(
        [str(PYTHON_BIN / "wrkreport"), "build", str(run_dir), "--out", str(tmp_path / "report")],
        capture_output=True,
        text=True,
        timeout=300,
        env=script_env(),
    )
    assert built.returncode == 0, built.stderr[-3000:]
    assert "Traceback" not in built.stderr
    assert (tmp_path / "report" / "index.html").is_file()
    manifest = json.loads((run_dir / "manifest.json").read_text())
    capacity = json.loads((tmp_path / "report" / "results.json").read_text())["capacity"]  # the search, from the target's measurements
    assert {(c["setup"], c["gomaxprocs"]) for c in capacity} == {
        (s, n) for s in TARGET_SETUPS.split(",") for n in manifest["parameters"]["gomaxprocs"]
    }
    assert all(c["capacity_rps"] >= 1 for c in capacity)


def test_link_dropping_mid_run_fails_the_run_keeps_files_and_cleans_the_target(lab, tmp_path):
    out = tmp_path / "raw"
    proc = subprocess.Popen(bench_argv(lab, out), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=script_env())
    try:
        wait_measurements(out, 2, proc)
        subprocess.run(["ip", "-n", lab.controller, "link", "set", "v1", "down"], check=True)
        time.sleep(25)  # longer than the ssh master's keep-alive limit (3 x 5 s): the master gives up
        subprocess.run(["ip", "-n", lab.controller, "link", "set", "v1", "up"], check=True)
        _, stderr = proc.communicate(timeout=180)
    finally:
        subprocess.run(["ip", "-n", lab.controller, "link", "set", "v1", "up"], check=False)
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 1, stderr[-4000:]
    assert "Traceback" not in stderr
    (run_dir,) = [p for p in out.iterdir() if p.is_dir() and not p.is_symlink()]
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "failed"
    assert f"lost the ssh connection to {lab.hosts[0].ssh}" in manifest["reason"], manifest["reason"]
    assert len(manifest["measurements"]) >= 2
    for entry in manifest["measurements"]:  # every completed measurement kept, and only those
        assert (run_dir / entry["file"]).is_file() and (run_dir / entry["cpu_file"]).is_file()
    assert len(list(run_dir.glob("*.wrk.txt"))) == len(manifest["measurements"])
    # Once the link was back, cleanup reached the target and stopped its servers by PID.
    assert lab.leftovers() == {}
    assert target_work_dirs(lab) == []


def test_sigint_stops_both_machines(lab, tmp_path):
    out = tmp_path / "raw"
    proc = subprocess.Popen(
        bench_argv(lab, out), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=script_env(), preexec_fn=default_sigint
    )
    try:
        wait_measurements(out, 1, proc)
        proc.send_signal(signal.SIGINT)  # `ip netns exec` execs the script: this is its PID
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, stderr[-4000:]
    (run_dir,) = [p for p in out.iterdir() if p.is_dir() and not p.is_symlink()]
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "interrupted" and manifest["reason"].startswith("interrupted by SIGINT")
    assert lab.leftovers() == {}
    assert target_work_dirs(lab) == []


def test_tls_key_made_and_kept_on_the_target_probe_and_counters_there(lab, tmp_path):
    """--server-host with the TLS setups (issue 22): the key only on the target (0600, removed at the end), both connection modes reached at its address, resumptions counted there."""
    out = tmp_path / "raw"
    setups = "go-http,go-https,nginx-https,go-https-new,nginx-https-new"
    argv = bench_argv(lab, out, "--setups", setups, "--gomaxprocs", "1", "--tls-resumption", "on")
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=script_env())
    try:
        wait_measurements(out, 1, proc)
        modes = lab.ssh(lab.hosts[0], "stat -c '%a %U' /tmp/wrkreport.*/tls/key.pem").stdout.split()
        assert modes == ["600", "root"], modes
        _, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr[-4000:]
    host = lab.hosts[0]
    (run_dir,) = [p for p in out.iterdir() if p.is_dir() and not p.is_symlink()]
    manifest = json.loads((run_dir / "manifest.json").read_text())
    for setup in setups.split(","):
        assert len((run_dir / f"{setup}.gomaxprocs-1.headers.txt").read_bytes()) == 141, setup
    assert manifest["parameters"]["urls"]["go-https-new"] == f"https://{host.address}:8443/"
    tls = manifest["tls"]
    assert {(p["protocol"], p["cipher"], p["error"]) for p in tls["setups"].values()} == {("TLSv1.3", "TLS_AES_128_GCM_SHA256", None)}
    assert len(tls["cert_sha256"].split(":")) == 32 and "/tmp/" not in json.dumps(tls)
    counts = {m["setup"]: m.get("tls") for m in manifest["measurements"]}
    assert counts["go-https"]["handshakes"] == 100  # read on the target, through gohello -read-tls-stats
    assert counts["go-https-new"]["handshakes"] > counts["go-https-new"]["resumed"] > 0
    assert counts["nginx-https-new"]["resumed"] > 0  # nginx's log there, by its size
    assert f"https-public={host.address}:8443" in (run_dir / "logs" / "go.gomaxprocs-1.log").read_text()
    assert [str(p) for p in out.rglob("*") if p.is_file() and b"PRIVATE KEY" in p.read_bytes()] == []
    assert lab.leftovers() == {}
    assert target_work_dirs(lab) == [], "the target's work dir (and the key in it) outlived the run"


def test_an_in_run_variant_runs_its_own_nginx_on_the_target_too(lab, tmp_path):
    """--variant with --server-host (issue 20): the variant's nginx starts, answers, is counted and stops on the target, beside the run's."""
    out = tmp_path / "raw"
    argv = bench_argv(lab, out, "--variant", "nokeep:no-upstream-keepalive", "--rates", str(TARGET_RATE))
    argv[argv.index("--setups") + 1] = "go-http,nginx-http"
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=script_env())
    assert done.returncode == 0, done.stderr[-4000:]
    assert "Traceback" not in done.stderr
    (run_dir,) = [p for p in out.iterdir() if p.is_dir() and not p.is_symlink()]
    manifest = json.loads((run_dir / "manifest.json").read_text())
    host = lab.hosts[0]
    variant = manifest["variant"]
    assert variant["nginx"] and variant["nginx_version"] == manifest["server_host"]["versions"]["nginx"], variant
    assert variant["nginx_V"].startswith("nginx version: nginx/")
    # Its configuration listens on the target's address at the twin's port, upstream keep-alive off.
    conf = (run_dir / "nginx-variant.conf").read_text()
    assert re.findall(r"^\s*listen (\S+);", conf, re.M) == [f"{host.address}:8181"]
    directive = re.compile(r"^\s*keepalive \d+;", re.M)
    assert not directive.search(conf) and directive.search((run_dir / "nginx.conf").read_text())
    assert len((run_dir / "nginx-http~nokeep.gomaxprocs-1.headers.txt").read_bytes()) == 141
    # The twin measured from here against the target, its servers' CPU read there: Go's and the variant's nginx.
    twins = [m for m in manifest["measurements"] if m["setup"] == "nginx-http~nokeep"]
    assert {m["gomaxprocs"] for m in twins} == set(manifest["parameters"]["gomaxprocs"])
    for entry in twins:
        assert entry["url"] == f"http://{host.address}:8181/"
        cpu = json.loads((run_dir / entry["cpu_file"]).read_text())
        assert cpu["host"] == "target"
        for name in ("go", "nginx"):
            used = cpu["processes"][name]
            assert used and used["user_s"] + used["system_s"] > 0, (entry["file"], name, used)
    passes = manifest["passes"]
    assert all(p["pids"]["variant_nginx"] and p["pids"]["variant_nginx_workers"] for p in passes)
    assert all(p["pids"]["variant_nginx"] != p["pids"]["nginx"] for p in passes)
    assert {m["setup"] for m in manifest["fixed_rate_measurements"]} == {"go-http", "nginx-http", "nginx-http~nokeep"}
    assert (run_dir / "logs" / "nginx-variant-error.gomaxprocs-1.log").is_file()
    # Nothing left on either machine, and the one-run compare reads it.
    assert lab.leftovers() == {}
    assert target_work_dirs(lab) == []
    compared = subprocess.run(
        [str(PYTHON_BIN / "wrkreport"), "compare", str(run_dir), "--out", str(tmp_path / "cmp")],
        capture_output=True,
        text=True,
        timeout=300,
        env=script_env(),
    )
    assert compared.returncode in (0, 1), compared.stderr[-3000:]
    assert "variant nokeep" in compared.stdout and "CPU ms/1k req" in compared.stdout


def test_a_variant_binary_on_the_target_must_be_absolute_and_pin_server_is_refused(lab, tmp_path):
    for spec, said in (
        ("new:nginx=sbin/nginx", "with --server-host, nginx= needs the absolute path of an nginx binary on that host"),
        ("pinned:pin-server=0", "pin-server names this machine's CPUs; it cannot pin the variant's nginx on --server-host"),
    ):
        done = subprocess.run(
            bench_argv(lab, tmp_path / "raw", "--variant", spec), capture_output=True, text=True, timeout=120, env=script_env()
        )
        assert done.returncode == 2 and said in done.stderr, done.stderr[-2000:]
        assert "Traceback" not in done.stderr
    done = subprocess.run(
        bench_argv(lab, tmp_path / "raw", "--variant", "new:nginx=/opt/none/nginx"),
        capture_output=True,
        text=True,
        timeout=120,
        env=script_env(),
    )
    assert done.returncode == 2 and "--variant new: /opt/none/nginx -V failed on" in done.stderr, done.stderr[-2000:]
    assert lab.leftovers() == {}
    assert target_work_dirs(lab) == []
