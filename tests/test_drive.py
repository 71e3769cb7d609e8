"""Tests for wrkreport.drive, run_bench.sh's helpers: fast, no servers, real files and sockets."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import pytest

from wrkreport import drive
from wrkreport.drive import UsageError, build_plan

REPO = Path(__file__).resolve().parent.parent
CAPTURED = Path(__file__).parent / "fixtures" / "wrk" / "captured"
TEMPLATE = REPO / "templates" / "nginx.conf.tmpl"
HEADERS_200 = (
    b"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 12\r\nContent-Type: text/plain\r\n"
    b"Server: gophr\r\nDate: Sun, 22 Nov 2026 16:47:00 GMT\r\n\r\n"
)
HEADERS_502 = (
    b"HTTP/1.1 502 Bad Gateway\r\nServer: nginx\r\nDate: Sun, 22 Nov 2026 16:47:00 GMT\r\n"
    b"Content-Type: text/html\r\nContent-Length: 150\r\nConnection: keep-alive\r\n\r\n"
)


def plan(*argv: str, env: dict | None = None, nproc: int = 2, euid: int = 1000) -> dict:
    """Return build_plan for these options with a fixed seed unless one is given."""
    env = {"BENCH_SEED": "7", **(env or {})}
    return build_plan(list(argv), env, Path("/repo"), nproc, euid)


# --- plan ---------------------------------------------------------------------------------


def test_default_plan_matches_the_documented_defaults():
    p = plan()
    assert p["profile"] == "default"
    assert (p["threads"], p["connections"], p["duration_s"], p["repeats"], p["warmup_s"], p["wrk_timeout_s"]) == (2, 100, 6, 5, 2, 2)
    assert p["gomaxprocs"] == [1, 2]
    assert p["setups"] == ["go-http", "nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix"]
    assert p["ports"] == {"go-http": 8080, "nginx-http": 8081, "nginx-fcgi-tcp": 8082, "nginx-fcgi-unix": 8083, "go-fcgi-tcp": 9001}
    assert p["urls"]["nginx-fcgi-unix"] == "http://127.0.0.1:8083/"
    assert p["out"] == "/repo/raw"
    assert p["measurements"] == 40
    assert p["tune"] is False and p["seed"] == 7
    assert p["expect_header_bytes"] == 141


def test_default_run_is_estimated_under_six_minutes():
    assert plan()["estimate_s"] <= 6 * 60


def test_gomaxprocs_is_deduplicated_on_one_core():
    assert plan(nproc=1)["gomaxprocs"] == [1]
    assert plan(nproc=8)["gomaxprocs"] == [1, 8]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--quick"], (2, 100, 2, 1, 1)),
        (["--profile", "quick"], (2, 100, 2, 1, 1)),
        (["--profile", "article"], (100, 5000, 30, 1, 5)),
    ],
)
def test_profiles(argv, expected):
    p = plan(*argv)
    assert (p["threads"], p["connections"], p["duration_s"], p["repeats"], p["warmup_s"]) == expected


def test_option_beats_environment_beats_profile():
    env = {"BENCH_PROFILE": "quick", "BENCH_DURATION": "3s", "BENCH_THREADS": "4"}
    p = plan("--threads", "1", env=env)
    assert (p["profile"], p["duration_s"], p["threads"], p["repeats"]) == ("quick", 3, 1, 1)


def test_environment_lists_and_ports():
    env = {"BENCH_GOMAXPROCS": "2 1 2", "BENCH_SETUPS": "nginx-http,go-http", "BENCH_PORTS": "go-http=18080,nginx-http=18081"}
    p = plan(env=env)
    assert p["gomaxprocs"] == [2, 1]
    assert p["setups"] == ["go-http", "nginx-http"]  # table order, whatever the given order
    assert p["needed_ports"] == {"go-http": 18080, "go-fcgi-tcp": 9001, "nginx-http": 18081}
    assert p["measurements"] == 2 * 2 * 5


def test_port_option_overrides_environment_and_is_repeatable():
    p = plan("--port", "go-http=18000", "--port", "go-fcgi-tcp=18004,nginx-http=18001", env={"BENCH_PORTS": "go-http=1"})
    assert p["ports"]["go-http"] == 18000 and p["ports"]["go-fcgi-tcp"] == 18004 and p["ports"]["nginx-http"] == 18001


def test_go_only_run_needs_only_go_ports():
    assert plan("--setups", "go-http")["needed_ports"] == {"go-http": 8080, "go-fcgi-tcp": 9001}


def test_seconds_accept_a_trailing_s():
    assert plan("--duration", "10s", "--warmup", "0")["duration_s"] == 10


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--threads", "0"], "--threads must be at least 1, not 0"),
        (["--threads", "two"], "--threads must be a whole number, not 'two'"),
        (["--duration", "1.5"], "--duration must be a whole number (seconds, e.g. 6 or 6s), not '1.5'"),
        (["--threads", "8", "--connections", "4"], "connections (4) must be >= threads (8), as wrk requires"),
        (["--setups", "nginx-static"], "unknown setup 'nginx-static'; choose from go-http, nginx-http, nginx-fcgi-tcp, nginx-fcgi-unix"),
        (["--port", "nginx-http"], "--port 'nginx-http': expected NAME=PORT with NAME one of"),
        (["--port", "nginx-http=70000"], "--port nginx-http: port 70000 is above 65535"),
        (["--port", "nginx-http=9001"], "go-fcgi-tcp and nginx-http are both given port 9001"),
        (["--quick", "--profile", "article"], "--quick and --profile article contradict each other"),
        (["--profile", "fast"], "argument --profile: invalid choice: 'fast'"),
        (["--bogus"], "unknown option or argument '--bogus'"),
        (["--threads"], "argument --threads: expected one argument"),
        (["--tune"], "--tune writes kernel settings (sysctl) and needs root"),
        (["--gomaxprocs", "0"], "--gomaxprocs value must be at least 1, not 0"),
    ],
)
def test_bad_options_are_usage_errors(argv, message):
    with pytest.raises(UsageError) as excinfo:
        plan(*argv)
    assert str(excinfo.value).startswith(message)


def test_tune_is_accepted_as_root():
    assert plan("--tune", euid=0)["tune"] is True


def test_seed_is_random_and_recorded_when_not_given():
    seeds = {build_plan([], {}, Path("/r"), 2, 1000)["seed"] for _ in range(5)}
    assert len(seeds) > 1


def test_plan_lines_for_the_script():
    lines = drive.plan_lines(plan("--setups", "go-http,nginx-fcgi-unix", "--out", "/tmp/x y"))
    assert "setups go-http nginx-fcgi-unix" in lines
    assert "nginx_setups nginx-fcgi-unix" in lines
    assert "gomaxprocs 1 2" in lines
    assert "port.go-fcgi-tcp 9001" in lines
    assert "url.nginx-fcgi-unix http://127.0.0.1:8083/" in lines
    assert "out /tmp/x y" in lines
    assert "needed_fds 456" in lines
    assert all(re.fullmatch(r"[a-z_.0-9-]+ \S.*", line) for line in lines)


def test_every_option_in_help_is_accepted_and_every_option_is_in_help():
    script = (REPO / "run_bench.sh").read_text()
    usage = script.split("cat <<'EOF'", 1)[1].split("\nEOF\n", 1)[0]
    in_help = set(re.findall(r"^  (--[a-z-]+)", usage, re.M))
    accepted = {o for action in drive.plan_parser()._actions for o in action.option_strings}
    assert in_help == accepted
    for param in drive.PARAMS:
        assert f"[{param.env}]" in usage
    for env in (drive.ENV_PROFILE, drive.ENV_GOMAXPROCS, drive.ENV_SETUPS, drive.ENV_OUT, drive.ENV_SEED):
        assert f"[{env}]" in usage
    assert f"[{drive.ENV_PORTS}=" in usage


# --- small helpers ------------------------------------------------------------------------


@pytest.mark.parametrize(("seconds", "text"), [(0, "0s"), (42, "42s"), (59.6, "1m 00s"), (190, "3m 10s"), (3725, "1h 02m")])
def test_format_duration(seconds, text):
    assert drive.format_duration(seconds) == text


def test_format_rate():
    assert drive.format_rate(14812.4) == "14,812"
    assert drive.format_rate(999.5) == "1,000"


def test_shuffled_orders_are_reproducible_permutations():
    setups = list(drive.SETUP_IDS)
    a = drive.shuffled_orders(setups, 5, seed=42, gomaxprocs=2)
    assert a == drive.shuffled_orders(setups, 5, seed=42, gomaxprocs=2)
    assert len(a) == 5 and all(sorted(order) == sorted(setups) for order in a)
    assert len({tuple(order) for order in a}) > 1  # not one order repeated
    assert a != drive.shuffled_orders(setups, 5, seed=43, gomaxprocs=2)
    assert a != drive.shuffled_orders(setups, 5, seed=42, gomaxprocs=1)


def test_estimate_counts_down_to_zero():
    p = plan()
    assert drive.estimate_seconds(p, 40, 0) == 0
    assert drive.estimate_seconds(p, 0, 2) > drive.estimate_seconds(p, 20, 1) > drive.estimate_seconds(p, 39, 0) > 0


# --- run directory and manifest ------------------------------------------------------------


def test_run_ids_never_collide(tmp_path):
    t = datetime(2026, 11, 22, 16, 47, 0, tzinfo=timezone.utc)
    names = [drive.create_run_dir(tmp_path / "raw", t).name for _ in range(3)]
    assert names == ["20261122T164700Z", "20261122T164700Z-2", "20261122T164700Z-3"]


def test_latest_is_a_relative_symlink_replaced_each_run(tmp_path):
    first = tmp_path / "20261122T164700Z"
    second = tmp_path / "20261122T164800Z"
    first.mkdir()
    second.mkdir()
    assert drive.point_latest(tmp_path, first) is None
    assert os.readlink(tmp_path / "latest") == "20261122T164700Z"
    drive.point_latest(tmp_path, second)
    assert os.readlink(tmp_path / "latest") == "20261122T164800Z"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["20261122T164700Z", "20261122T164800Z", "latest"]


def test_latest_that_is_a_real_directory_is_left_alone(tmp_path):
    (tmp_path / "latest").mkdir()
    run = tmp_path / "20261122T164700Z"
    run.mkdir()
    assert "is not a symlink" in drive.point_latest(tmp_path, run)
    assert (tmp_path / "latest").is_dir() and not (tmp_path / "latest").is_symlink()


def test_atomic_write_leaves_no_temp_file(tmp_path):
    drive.write_json_atomic(tmp_path / "manifest.json", {"a": 1})
    drive.write_json_atomic(tmp_path / "manifest.json", {"a": 2})
    assert json.loads((tmp_path / "manifest.json").read_text()) == {"a": 2}
    assert [p.name for p in tmp_path.iterdir()] == ["manifest.json"]


def test_cell_200_with_141_bytes_is_usable():
    cell = drive.cell_from_headers(HEADERS_200, True, None)
    assert len(HEADERS_200) == 141
    assert cell == {"ready": True, "headers_captured": True, "status_line": "HTTP/1.1 200 OK", "header_bytes": 141, "error": None}


def test_cell_502_is_recorded_and_not_measured():
    cell = drive.cell_from_headers(HEADERS_502, True, None)
    assert len(HEADERS_502) == 150
    assert cell["header_bytes"] == 150 and cell["status_line"] == "HTTP/1.1 502 Bad Gateway"
    assert cell["error"] == "answered 'HTTP/1.1 502 Bad Gateway', not 200: not measured"


def test_cell_not_ready_or_silent():
    assert drive.cell_from_headers(None, False, "no HTTP answer")["error"] == "no HTTP answer"
    silent = drive.cell_from_headers(b"", True, None)
    assert silent["headers_captured"] is False and silent["error"] == "no response to curl -sI"


def test_go_reported_gomaxprocs():
    log = "gohello: GOMAXPROCS=2 http=127.0.0.1:8080 fcgi-tcp=127.0.0.1:9001 pid=9 ready\ngohello: stopped\n"
    assert drive.go_reported_gomaxprocs(log) == 2
    assert drive.go_reported_gomaxprocs("gohello: FastCGI TCP: address already in use\n") is None


@pytest.mark.parametrize(
    ("fixture", "exit_code", "text"),
    [
        ("wrk-4.1.0__latency.txt", 0, "60,042 req/s"),
        ("wrk-4.1.0__nginx-502-latency.txt", 0, "28,797 req/s (89,261 non-2xx/3xx)"),
        ("wrk-4.1.0__refused.STDERR.txt", 1, "no result (wrk exit 1: unable to connect to 127.0.0.1:18099 Connection refused)"),
    ],
)
def test_progress_result_reads_the_finished_file(fixture, exit_code, text):
    assert drive.progress_result(CAPTURED / fixture, exit_code) == text


def test_progress_start_names_position_and_time_left():
    manifest = {"parameters": plan(), "passes": [], "measurements": []}
    drive.new_pass(manifest, 1)
    second = drive.new_pass(manifest, 2)
    setup = second["order"][1][2]  # repeat 2, third in its order
    line = drive.progress_start(manifest, 2, setup, 2)
    assert line.startswith(f"[27/40] {setup} GOMAXPROCS=2 run 2/5 (~")
    assert line.endswith(" left) ... ")


# --- nginx configuration ----------------------------------------------------------------------


def fake_nginx_V(tmp_path: Path, extra: str = "") -> str:
    """Return an `nginx -V` text whose conf-path points at a dir with a stock fastcgi_params."""
    (tmp_path / "fastcgi_params").write_text("fastcgi_param  QUERY_STRING $query_string;\n")
    return f"nginx version: nginx/1.22.1\nconfigure arguments: --conf-path={tmp_path}/nginx.conf {extra}"


def render(tmp_path: Path, setups: list[str], user: str | None = "nobody", extra: str = "") -> str:
    manifest = {"nginx_V": fake_nginx_V(tmp_path, extra), "parameters": plan("--setups", ",".join(setups))}
    values = drive.nginx_values(manifest, "/tmp/wrkreport.abc/nginx", "/tmp/wrkreport.abc/go.sock", user, "nogroup", 20000)
    nginx_setups = [s for s in setups if drive.SETUP_BY_ID[s].server == "nginx"]
    return drive.render_template(TEMPLATE.read_text(), nginx_setups, values)


def test_rendered_config_has_the_article_settings(tmp_path):
    conf = render(tmp_path, list(drive.SETUP_IDS))
    for directive in (
        "user nobody nogroup;",
        "worker_processes auto;",
        "worker_rlimit_nofile 20000;",
        "daemon off;",
        "pid /tmp/wrkreport.abc/nginx/nginx.pid;",
        "worker_connections 10000;",
        "use epoll;",
        "multi_accept on;",
        "keepalive_timeout 300;",
        "keepalive_requests 10000;",
        "tcp_nodelay on;",
        "server_tokens off;",
        "gzip off;",
        "access_log off;",
        "keepalive 300;",
        "proxy_http_version 1.1;",
        'proxy_set_header Connection "";',
        "fastcgi_keep_conn on;",
        f"include {tmp_path}/fastcgi_params;",
        "server unix:/tmp/wrkreport.abc/go.sock;",
        "server 127.0.0.1:8080;",
        "server 127.0.0.1:9001;",
        "uwsgi_temp_path /tmp/wrkreport.abc/nginx/temp/uwsgi;",
    ):
        assert directive in conf, directive
    for port in (8081, 8082, 8083):
        assert f"listen 127.0.0.1:{port};" in conf
    assert "{{" not in conf and "#@" not in conf
    assert not re.search(r"^\s*(error_log|listen (?!127\.0\.0\.1:))", conf, re.M)
    directives = "\n".join(line.split("#", 1)[0] for line in conf.splitlines())
    assert "/var/" not in directives and "/run/" not in directives  # nothing outside the prefix


def test_rendered_config_keeps_only_the_selected_setups(tmp_path):
    conf = render(tmp_path, ["go-http", "nginx-fcgi-tcp"])
    assert "listen 127.0.0.1:8082;" in conf
    assert "8081" not in conf and "8083" not in conf and "go.sock" not in conf


def test_rendered_config_without_root_has_no_user_directive(tmp_path):
    conf = render(tmp_path, list(drive.SETUP_IDS), user=None)
    assert not re.search(r"^user ", conf, re.M)


def test_rendered_config_skips_temp_paths_of_missing_modules(tmp_path):
    conf = render(tmp_path, list(drive.SETUP_IDS), extra="--without-http_uwsgi_module --without-http_scgi_module")
    assert "uwsgi_temp_path" not in conf and "scgi_temp_path" not in conf


def test_nginx_without_fastcgi_params_is_refused(tmp_path):
    manifest = {"nginx_V": f"configure arguments: --conf-path={tmp_path}/nope/nginx.conf", "parameters": plan()}
    with pytest.raises(UsageError, match="cannot find nginx's stock fastcgi_params"):
        drive.nginx_values(manifest, "/p", "/s", None, None, 1024)


def test_nginx_values_refuse_unsafe_paths(tmp_path):
    manifest = {"nginx_V": fake_nginx_V(tmp_path), "parameters": plan()}
    with pytest.raises(UsageError, match="cannot be written into the nginx configuration"):
        drive.nginx_values(manifest, "/tmp/a b", "/s", None, None, 1024)


def test_missing_nginx_modules_are_named():
    v = "configure arguments: --without-http_fastcgi_module"
    assert drive.nginx_missing_modules(v, ["go-http", "nginx-http"]) == []
    assert drive.nginx_missing_modules(v, ["nginx-fcgi-unix"]) == [
        "nginx-fcgi-unix needs nginx's http_fastcgi module, which this nginx was built without"
    ]


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("a {{nope}}\n", "no value for {{nope}}"),
        ("#@setup nginx-http\nx\n", "section nginx-http not closed"),
        ("#@end\n", "#@end without #@setup"),
        ("#@setup nginx-static\n#@end\n", "unknown setup 'nginx-static'"),
        ("#@setup nginx-http\n#@setup go-http\n", "section go-http inside nginx-http"),
    ],
)
def test_broken_templates_are_errors(template, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        drive.render_template(template, ["nginx-http"], {})


# --- sysctl ---------------------------------------------------------------------------------


def fake_proc_sys(tmp_path: Path, values: dict[str, str]) -> Path:
    for key, value in values.items():
        path = drive.sysctl_path(key, tmp_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(value + "\n")
    return tmp_path


def test_read_sysctl_normalises_and_reports_absent_keys(tmp_path):
    root = fake_proc_sys(tmp_path, {"net.ipv4.ip_local_port_range": "32768\t60999", "net.core.somaxconn": "4096"})
    values = drive.read_sysctl(root)
    assert list(values) == [key for key, _, _ in drive.ARTICLE_SYSCTL]
    assert values["net.ipv4.ip_local_port_range"] == "32768 60999"
    assert values["net.core.somaxconn"] == "4096"
    assert values["net.ipv4.tcp_tw_recycle"] is None


def test_tune_writes_announces_first_and_never_lowers_limits(tmp_path):
    root = fake_proc_sys(
        tmp_path,
        {
            "fs.file-max": "9223372036854775807",
            "net.core.somaxconn": "4096",
            "net.ipv4.ip_forward": "1",
            "net.ipv4.tcp_fin_timeout": "60",
            "net.ipv4.tcp_tw_reuse": "1",
        },
    )
    said = []

    def say(text):
        said.append((text, drive.sysctl_path("net.core.somaxconn", root).read_text()))

    actions = {a["key"]: a["action"] for a in drive.apply_tune(root, say)}
    assert actions["fs.file-max"] == "keep-higher"
    assert actions["net.core.somaxconn"] == "write"
    assert actions["net.ipv4.ip_forward"] == "skip"
    assert actions["net.ipv4.tcp_tw_reuse"] == "same"
    assert actions["net.ipv4.tcp_tw_recycle"] == "absent"
    assert drive.read_sysctl(root)["net.core.somaxconn"] == "65535"
    assert drive.read_sysctl(root)["net.ipv4.tcp_fin_timeout"] == "30"
    assert drive.read_sysctl(root)["net.ipv4.ip_forward"] == "1"
    assert drive.read_sysctl(root)["fs.file-max"] == "9223372036854775807"
    announce = [s for s in said if s[0] == "sysctl net.core.somaxconn: 4096 -> 65535"]
    assert announce and announce[0][1] == "4096\n"  # printed before the write


# --- ports, users, processes ----------------------------------------------------------------


def test_busy_port_is_named_with_its_owner():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        messages = drive.busy_port_messages({"nginx-http": port})
    assert len(messages) == 1
    assert messages[0].startswith(f"port {port} (nginx-http) on 127.0.0.1 is in use by pid {os.getpid()} (")


def test_free_port_gives_no_message():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert drive.busy_port_messages({"go-http": port}) == []


def test_untraversable_names_the_blocking_directory():
    with tempfile.TemporaryDirectory(dir="/tmp") as top:
        check_untraversable(Path(top))


def check_untraversable(tmp_path: Path):
    outer = tmp_path / "outer"
    inner = outer / "inner"
    inner.mkdir(parents=True)
    os.chmod(tmp_path, 0o755)
    os.chmod(outer, 0o700)
    os.chmod(inner, 0o710)
    stranger = 54321
    blocked = drive.untraversable(inner, stranger, {54321})
    assert blocked is not None and blocked.startswith(f"{outer} (mode 0700,")
    os.chmod(outer, 0o711)
    assert drive.untraversable(inner, stranger, {54321}) == f"{inner} (mode 0710, owner {os.getuid()}:{os.getgid()})"
    assert drive.untraversable(inner, stranger, {os.getgid()}) is None  # group member may pass
    assert drive.untraversable(inner, 0, set()) is None


def test_child_pids_finds_a_child():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(10)"])
    try:
        assert child.pid in drive.child_pids(os.getpid())
    finally:
        child.kill()
        child.wait()


# --- the subcommands together, as the script calls them; checked against the contract -------


def run_drive(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    return subprocess.run([sys.executable, "-m", "wrkreport.drive", *args], capture_output=True, text=True, env=env, check=False)


def documented_manifest() -> dict:
    """Return the manifest example of docs/raw-format.md, comments stripped."""
    text = (REPO / "docs" / "raw-format.md").read_text()
    block = text.split("## manifest.json", 1)[1].split("```json\n", 1)[1].split("```", 1)[0]
    return json.loads(re.sub(r"\s+//.*$", "", block, flags=re.M))


def test_manifest_lifecycle_follows_the_documented_contract(tmp_path):
    out = tmp_path / "raw"
    plan_file = tmp_path / "plan.json"
    done = run_drive("plan", "--root", str(tmp_path), "--save", str(plan_file), "--", "--quick", "--out", str(out), "--seed", "3", "--gomaxprocs", "1,2")
    assert done.returncode == 0, done.stderr
    done = run_drive("init", "--plan", str(plan_file), "--command", "./run_bench.sh --quick", "--ulimit-n", "4096")
    assert done.returncode == 0, done.stderr
    run = Path(done.stdout.strip())
    assert run.parent == out and (out / "latest").resolve() == run.resolve()
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "running" and manifest["ended_at"] is None

    order = run_drive("pass-start", "--run", str(run), "--gomaxprocs", "1").stdout.split("\n")
    assert order[0].split() == drive.shuffled_orders(list(drive.SETUP_IDS), 1, 3, 1)[0]
    (run / "go.log").write_text("gohello: GOMAXPROCS=1 http=127.0.0.1:1 fcgi-tcp=127.0.0.1:2 pid=5 ready\n")
    assert run_drive("pass-update", "--run", str(run), "--gomaxprocs", "1", "--go-pid", "5", "--go-log", str(run / "go.log")).returncode == 0
    (run / "go-http.gomaxprocs-1.headers.txt").write_bytes(HEADERS_200)
    (run / "nginx-fcgi-unix.gomaxprocs-1.headers.txt").write_bytes(HEADERS_502)
    ok = run_drive("cell", "--run", str(run), "--gomaxprocs", "1", "--setup", "go-http", "--ready", "1", "--headers", str(run / "go-http.gomaxprocs-1.headers.txt"))
    assert (ok.returncode, ok.stdout) == (0, "")
    bad = run_drive("cell", "--run", str(run), "--gomaxprocs", "1", "--setup", "nginx-fcgi-unix", "--ready", "1", "--headers", str(run / "nginx-fcgi-unix.gomaxprocs-1.headers.txt"))
    assert bad.returncode == 3 and "502 Bad Gateway" in bad.stdout
    start = run_drive("measure-start", "--run", str(run), "--gomaxprocs", "1", "--setup", "go-http", "--repeat", "1")
    assert re.fullmatch(r"\[\d/8\] go-http GOMAXPROCS=1 run 1/1 \(~\d+s left\) \.\.\. ", start.stdout)
    name = "go-http.gomaxprocs-1.run-1.wrk.txt"
    (run / name).write_bytes((CAPTURED / "wrk-4.1.0__latency.txt").read_bytes())
    end = run_drive(
        "measure-end", "--run", str(run), "--gomaxprocs", "1", "--setup", "go-http", "--repeat", "1",
        "--file", name, "--command", "wrk --latency -t2 -c100 -d2s --timeout 2s http://127.0.0.1:8080/",
        "--exit-code", "0", "--started-at", "2026-11-22T16:47:00Z",
    )  # fmt: skip
    assert end.stdout == "60,042 req/s\n"
    assert run_drive("pass-update", "--run", str(run), "--gomaxprocs", "1", "--note", "x: y", "--ended").returncode == 0
    assert run_drive("finish", "--run", str(run), "--status", "complete").returncode == 0

    manifest = json.loads((run / "manifest.json").read_text())
    doc = documented_manifest()
    assert set(doc) <= set(manifest), "a documented key is missing"
    assert set(doc["parameters"]) <= set(manifest["parameters"])
    assert set(doc["machine"]) <= set(manifest["machine"])
    assert set(doc["versions"]) == set(manifest["versions"])
    assert set(doc["sysctl"]) - {"..."} <= set(manifest["sysctl"])
    assert set(doc["passes"][0]) <= set(manifest["passes"][0])
    assert set(doc["passes"][0]["cells"]["go-http"]) <= set(manifest["passes"][0]["cells"]["go-http"])
    assert set(doc["measurements"][0]) == set(manifest["measurements"][0])
    assert manifest["status"] == "complete" and manifest["reason"] is None and manifest["ended_at"]
    assert manifest["command"] == "./run_bench.sh --quick" and manifest["ulimit_n"] == 4096
    assert manifest["parameters"]["seed"] == 3 and manifest["parameters"]["profile"] == "quick"
    first = manifest["passes"][0]
    assert first["go_reported_gomaxprocs"] == 1 and first["pids"]["go"] == 5 and first["notes"] == ["x: y"]
    assert first["cells"]["go-http"]["header_bytes"] == 141 and first["cells"]["go-http"]["error"] is None
    assert first["cells"]["nginx-fcgi-unix"]["header_bytes"] == 150
    assert manifest["measurements"][0]["file"] == name and manifest["measurements"][0]["exit_code"] == 0
    assert run_drive("summary", "--run", str(run)).stdout.splitlines()[0] == "GOMAXPROCS=1 go-http          60,042 req/s (median of 1)"


def test_second_init_in_the_same_second_gets_a_suffix(tmp_path):
    plan_file = tmp_path / "plan.json"
    run_drive("plan", "--root", str(tmp_path), "--save", str(plan_file), "--", "--out", str(tmp_path / "raw"))
    runs = [Path(run_drive("init", "--plan", str(plan_file), "--command", "x").stdout.strip()) for _ in range(2)]
    assert runs[0] != runs[1] and runs[0].is_dir() and runs[1].is_dir()
    if runs[0].name[:16] == runs[1].name[:16]:
        assert runs[1].name == runs[0].name + "-2"


def test_usage_error_message_and_status():
    done = run_drive("plan", "--root", "/r", "--save", "/dev/null", "--", "--threads", "x")
    assert done.returncode == 2
    assert done.stderr == "run_bench.sh: --threads must be a whole number, not 'x' (see ./run_bench.sh --help)\n"
