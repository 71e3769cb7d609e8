"""Tests for wrkreport.drive, run_bench.sh's helpers: fast, no servers, real files and sockets."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
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


def plan(*argv: str, env: dict | None = None, nproc: int = 2, euid: int = 1000, cpus: frozenset | None = None) -> dict:
    """Return build_plan for these options with a fixed seed unless one is given."""
    env = {"BENCH_SEED": "7", **(env or {})}
    return build_plan(list(argv), env, Path("/repo"), nproc, euid, cpus)


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
    assert p["connections_levels"] == [100] and p["connections"] == 100
    assert (p["body_bytes"], p["handler_delay_ms"], p["upstream_keepalive"]) == (12, 0, True)
    assert (p["pin_client"], p["pin_server"], p["warnings"]) == (None, None, [])


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
        (
            ["--setups", "nginx-php"],
            "unknown setup 'nginx-php'; choose from go-http, nginx-http, nginx-fcgi-tcp, nginx-fcgi-unix, "
            "nginx-http-unix, go-fasthttp, nginx-static (or all)",
        ),
        (["--port", "nginx-http"], "--port 'nginx-http': expected NAME=PORT with NAME one of"),
        (["--port", "nginx-http=70000"], "--port nginx-http: port 70000 is above 65535"),
        (["--port", "nginx-http=9001"], "go-fcgi-tcp and nginx-http are both given port 9001"),
        (["--quick", "--profile", "article"], "--quick and --profile article contradict each other"),
        (["--profile", "fast"], "argument --profile: invalid choice: 'fast'"),
        (["--bogus"], "unknown option or argument '--bogus'"),
        (["--threads"], "argument --threads: expected one argument"),
        (["--tune"], "--tune writes kernel settings (sysctl) and needs root"),
        (["--gomaxprocs", "0"], "--gomaxprocs value must be at least 1, not 0"),
        (["--connections", "10,0"], "--connections value must be at least 1, not 0"),
        (["--connections", "10,x"], "--connections value must be a whole number, not 'x'"),
        (["--connections", ","], "--connections needs at least one value, e.g. 100 or 10,100,1000"),
        (["--connections", "1,50"], "connections (1) must be >= threads (2), as wrk requires"),
        (["--pin-client", "2"], "--pin-client 2: CPU 2 is not available here (this machine lets the benchmark use CPU 0-1)"),
        (["--pin-server", "0-3"], "--pin-server 0-3: CPU 2-3 is not available here"),
        (["--pin-client", "one"], "--pin-client 'one' is not a CPU list like 0, 1-3 or 0,2 (as taskset -c takes)"),
        (["--pin-client", "1-0"], "--pin-client '1-0': range 1-0 runs backwards"),
        (["--handler-delay", "1"], "--handler-delay must be a duration like 1ms, 500us or 0, not '1'"),
        (["--handler-delay=-1ms"], "--handler-delay must be a duration like 1ms, 500us or 0, not '-1ms'"),
        (["--handler-delay", "2m"], "--handler-delay must be a duration like 1ms, 500us or 0, not '2m'"),
        (["--handler-delay", "61s"], "--handler-delay 61s is longer than 60s"),
        (["--body-bytes", "0"], "--body-bytes must be at least 1, not 0"),
        (["--body-bytes", "1048577"], "--body-bytes must be at most 1048576 (1 MiB), not 1048577"),
        (["--port", "nginx-static=9001", "--setups", "all"], "go-fcgi-tcp and nginx-static are both given port 9001"),
    ],
)
def test_bad_options_are_usage_errors(argv, message):
    with pytest.raises(UsageError) as excinfo:
        plan(*argv)
    assert str(excinfo.value).startswith(message)


def test_connection_levels_sweep():
    p = plan("--connections", "10,100,1000,100", "--setups", "go-http,nginx-http")
    assert p["connections_levels"] == [10, 100, 1000]  # given order, deduplicated
    assert p["connections"] is None  # several levels: no single value
    assert p["measurements"] == 2 * 3 * 2 * 5
    assert p["needed_fds"] == 2 * 1000 + 256
    assert plan("--connections", "50", env={"BENCH_CONNECTIONS": "1,2"})["connections_levels"] == [50]
    assert plan(env={"BENCH_CONNECTIONS": "20 40"})["connections_levels"] == [20, 40]


def test_setups_all_and_the_new_setups_ports():
    p = plan("--setups", "all")
    assert p["setups"] == list(drive.SETUP_IDS) and len(p["setups"]) == 7
    assert p["ports"] == {
        "go-http": 8080, "nginx-http": 8081, "nginx-fcgi-tcp": 8082, "nginx-fcgi-unix": 8083,
        "nginx-http-unix": 8084, "go-fasthttp": 8085, "nginx-static": 8086, "go-fcgi-tcp": 9001,
    }  # fmt: skip
    assert p["needed_ports"] == {name: port for name, port in p["ports"].items()}
    assert p["urls"]["go-fasthttp"] == "http://127.0.0.1:8085/"
    q = plan("--setups", "go-fasthttp,nginx-static", "--port", "nginx-static=18086,nginx-http-unix=18084")
    assert q["setups"] == ["go-fasthttp", "nginx-static"]
    assert q["ports"]["nginx-static"] == 18086 and "nginx-http-unix" not in q["ports"]  # kept only when chosen
    assert q["needed_ports"] == {"go-http": 8080, "go-fcgi-tcp": 9001, "go-fasthttp": 8085, "nginx-static": 18086}


def test_pinning_is_validated_normalised_and_overlap_is_a_warning():
    p = plan("--pin-client", "0", "--pin-server", "3,1-2", nproc=4)
    assert (p["pin_client"], p["pin_server"], p["warnings"]) == ("0", "1-3", [])
    q = plan("--pin-client", "0-1", env={"BENCH_PIN_SERVER": "1"})
    assert (q["pin_client"], q["pin_server"]) == ("0-1", "1")
    assert q["warnings"] == ["--pin-client 0-1 and --pin-server 1 share CPU 1: wrk and the servers compete there"]
    # Only CPUs this process may use count, not how many the machine has.
    with pytest.raises(UsageError, match=r"--pin-client 0: CPU 0 is not available here \(this machine lets the benchmark use CPU 2,5\)"):
        plan("--pin-client", "0", cpus=frozenset({2, 5}))


@pytest.mark.parametrize(("text", "cpus"), [("0", [0]), ("0-2,5", [0, 1, 2, 5]), ("3,1", [1, 3]), (" 1 , 0 ", [0, 1]), ("2-2", [2])])
def test_cpu_lists_as_taskset_takes_them(text, cpus):
    assert drive.parse_cpu_list(text, "--pin-client") == cpus
    assert drive.parse_cpu_list(drive.format_cpu_list(cpus), "x") == cpus


def test_format_cpu_list():
    assert drive.format_cpu_list([0, 1, 2, 5, 7, 8]) == "0-2,5,7-8"
    assert drive.format_cpu_list([]) == ""


@pytest.mark.parametrize(("text", "ns"), [("0", 0), ("1ms", 10**6), ("500us", 500_000), ("500µs", 500_000), ("1.5ms", 1_500_000), ("2s", 2 * 10**9), ("250ns", 250)])
def test_handler_delay_durations(text, ns):
    assert drive.parse_duration_ns(text, "--handler-delay") == ns


def test_knobs_and_their_environment_variables():
    p = plan("--no-upstream-keepalive", "--handler-delay", "1ms", "--body-bytes", "4096")
    assert (p["upstream_keepalive"], p["handler_delay_ns"], p["handler_delay_ms"], p["body_bytes"]) == (False, 10**6, 1, 4096)
    assert p["expect_header_bytes"] == 143
    env = {"BENCH_UPSTREAM_KEEPALIVE": "off", "BENCH_HANDLER_DELAY": "500us", "BENCH_BODY_BYTES": "100"}
    q = plan(env=env)
    assert (q["upstream_keepalive"], q["handler_delay_ms"], q["body_bytes"], q["expect_header_bytes"]) == (False, 0.5, 100, 142)
    assert plan(env={"BENCH_UPSTREAM_KEEPALIVE": "1"})["upstream_keepalive"] is True
    assert plan("--handler-delay", "2ms", env={"BENCH_HANDLER_DELAY": "x"})["handler_delay_ms"] == 2  # option wins
    with pytest.raises(UsageError, match="BENCH_UPSTREAM_KEEPALIVE must be 1 or 0 \\(on/off\\), not 'maybe'"):
        plan(env={"BENCH_UPSTREAM_KEEPALIVE": "maybe"})


@pytest.mark.parametrize(("body_bytes", "header_bytes"), [(1, 140), (9, 140), (12, 141), (99, 141), (100, 142), (4096, 143), (1048576, 146)])
def test_expected_header_bytes_follow_the_content_length_digits(body_bytes, header_bytes):
    assert drive.expect_header_bytes(body_bytes) == header_bytes
    assert len(HEADERS_200.replace(b"Content-Length: 12", f"Content-Length: {body_bytes}".encode())) == header_bytes


def test_body_text_repeats_the_article_line():
    assert drive.body_text(12) == "Hello World\n"
    assert drive.body_text(5) == "Hello"
    assert drive.body_text(30) == "Hello World\nHello World\nHello "
    assert len(drive.body_text(4096)) == 4096


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
    assert "connections 100" in lines and "connections_max 100" in lines and "sweep 0" in lines
    assert "server.nginx-fcgi-unix nginx" in lines and "needs.nginx-fcgi-unix nginx go" in lines
    assert "body_bytes 12" in lines and "handler_delay 0ns" in lines
    assert not any(line.startswith(("fasthttp_setups", "pin_client", "pin_server")) for line in lines)
    assert all(re.fullmatch(r"[a-z_.0-9-]+ \S.*", line) for line in lines)


def test_plan_lines_for_a_sweep_with_the_new_setups_and_pinning():
    lines = drive.plan_lines(plan("--setups", "all", "--connections", "10,100", "--pin-client", "0", "--pin-server", "1", "--handler-delay", "1.5ms"))
    assert "connections 10 100" in lines and "connections_max 100" in lines and "sweep 1" in lines
    assert "nginx_setups nginx-http nginx-fcgi-tcp nginx-fcgi-unix nginx-http-unix nginx-static" in lines
    assert "fasthttp_setups go-fasthttp" in lines
    assert "server.go-fasthttp fasthttp" in lines and "needs.go-fasthttp fasthttp" in lines
    assert "server.nginx-static nginx" in lines and "needs.nginx-static nginx" in lines
    assert "pin_client 0" in lines and "pin_server 1" in lines
    assert "handler_delay 1500000ns" in lines
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
    for env in (drive.ENV_PIN_CLIENT, drive.ENV_PIN_SERVER, drive.ENV_HANDLER_DELAY, drive.ENV_BODY_BYTES):
        assert f"[{env}]" in usage
    assert f"[{drive.ENV_PORTS}=" in usage
    assert f"[{drive.ENV_UPSTREAM_KEEPALIVE}=0]" in usage
    for setup in drive.SETUPS:
        assert setup.id in usage and f"{setup.id} {setup.default_port}" in " ".join(usage.split())


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


def test_estimate_of_a_sweep_counts_a_warm_up_per_level():
    one, three = plan("--setups", "all"), plan("--setups", "all", "--connections", "10,100,1000")
    assert three["measurements"] == 3 * one["measurements"] == 3 * 70
    per_level = 7 * (2 + drive.MEASUREMENT_OVERHEAD_S)
    assert drive.estimate_seconds(three, 0, 2) - 3 * drive.estimate_seconds(one, 0, 2) == pytest.approx(-4 * drive.PASS_OVERHEAD_S)
    assert drive.estimate_seconds(three, 210, 0, 1) == pytest.approx(per_level)


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
    line = drive.progress_start(manifest, 2, 100, setup, 2)
    assert line.startswith(f"[27/40] {setup} GOMAXPROCS=2 run 2/5 (~")
    assert line.endswith(" left) ... ")


def test_progress_in_a_sweep_names_the_level():
    manifest = {"parameters": plan("--connections", "10,50", "--repeats", "2"), "passes": [], "measurements": []}
    drive.new_pass(manifest, 1)
    second = drive.new_pass(manifest, 2)
    assert second["order_connections"] == [10, 10, 50, 50]
    setup = second["order"][3][0]  # level 50, repeat 2, first in its order
    line = drive.progress_start(manifest, 2, 50, setup, 2)
    assert line.startswith(f"[29/32] {setup} GOMAXPROCS=2 c=50 run 2/2 (~")


def test_pass_orders_one_per_level_and_repeat_and_unchanged_for_one_level():
    single = {"parameters": plan("--repeats", "3"), "passes": [], "measurements": []}
    entry = drive.new_pass(single, 2)
    assert entry["order"] == drive.shuffled_orders(list(drive.DEFAULT_SETUP_IDS), 3, 7, 2)
    assert entry["order_connections"] == [100, 100, 100]
    assert entry["pids"] == {"go": None, "nginx": None, "nginx_workers": [], "fasthttp": None}
    sweep = {"parameters": plan("--repeats", "3", "--connections", "100,200"), "passes": [], "measurements": []}
    orders = drive.new_pass(sweep, 2)["order"]
    assert orders[:3] == entry["order"] and len(orders) == 6  # the first level draws as a single one would


# --- nginx configuration ----------------------------------------------------------------------


def fake_nginx_V(tmp_path: Path, extra: str = "") -> str:
    """Return an `nginx -V` text whose conf-path points at a dir with a stock fastcgi_params."""
    (tmp_path / "fastcgi_params").write_text("fastcgi_param  QUERY_STRING $query_string;\n")
    return f"nginx version: nginx/1.22.1\nconfigure arguments: --conf-path={tmp_path}/nginx.conf {extra}"


def render(tmp_path: Path, setups: list[str], user: str | None = "nobody", extra: str = "") -> str:
    manifest = {"nginx_V": fake_nginx_V(tmp_path, extra), "parameters": plan("--setups", ",".join(setups))}
    values = drive.nginx_values(manifest, "/tmp/wrkreport.abc/nginx", "/tmp/wrkreport.abc/go.sock", user, "nogroup", 20000)
    nginx_setups = [s for s in setups if drive.SETUP_BY_ID[s].server == "nginx"]
    return drive.render_template(TEMPLATE.read_text(), nginx_setups, values, drive.nginx_flags(manifest))


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


def render_manifest(tmp_path: Path, *argv: str) -> dict:
    return {"nginx_V": fake_nginx_V(tmp_path), "parameters": plan(*argv)}


def render_with(tmp_path: Path, *argv: str) -> str:
    manifest = render_manifest(tmp_path, *argv)
    values = drive.nginx_values(manifest, "/tmp/w/nginx", "/tmp/w/go.sock", None, None, 1024, "/tmp/w/gohttp.sock")
    nginx_setups = [s for s in manifest["parameters"]["setups"] if drive.SETUP_BY_ID[s].server == "nginx"]
    return drive.render_template(TEMPLATE.read_text(), nginx_setups, values, drive.nginx_flags(manifest))


def test_rendered_config_of_the_new_nginx_setups(tmp_path):
    conf = render_with(tmp_path, "--setups", "all")
    assert "server unix:/tmp/w/gohttp.sock;" in conf and "proxy_pass http://go_http_unix;" in conf
    assert "listen 127.0.0.1:8084;" in conf and "listen 127.0.0.1:8086;" in conf
    assert "default_type text/plain;" in conf and 'return 200 "Hello World\\n";' in conf
    assert conf.count("keepalive 300;") == 4 and conf.count('proxy_set_header Connection "";') == 2
    assert "8085" not in conf  # go-fasthttp is not behind nginx
    assert "{{" not in conf and "#@" not in conf


def test_rendered_config_without_upstream_keepalive(tmp_path):
    conf = render_with(tmp_path, "--setups", "all", "--no-upstream-keepalive")
    directives = "\n".join(line.split("#", 1)[0] for line in conf.splitlines())
    assert "keepalive 300;" not in directives and "keepalive_requests 10000;" in directives  # the client side keeps it
    assert directives.count("keepalive_requests 10000;") == 1
    assert "proxy_http_version" not in directives and "proxy_set_header" not in directives
    assert directives.count("fastcgi_keep_conn off;") == 2 and "fastcgi_keep_conn on;" not in directives


def test_static_body_fits_in_one_token_or_comes_from_maps(tmp_path):
    assert drive.static_body_values(12)["static_return"] == '"Hello World\\n"'
    conf = render_with(tmp_path, "--setups", "nginx-static", "--body-bytes", "4096")
    maps = dict(re.findall(r'map \$server_port \$(static_body_\d+) \{ default "([^"]*)"; \}', conf))
    assert list(maps) == ["static_body_0", "static_body_1", "static_body_2"]
    assert 'return 200 "$static_body_0$static_body_1$static_body_2";' in conf
    body = "".join(maps[name] for name in maps).replace("\\n", "\n")
    assert body == drive.body_text(4096)
    assert max(len(token) for token in conf.split()) < 4096 - 100  # nginx's token limit


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
        ("#@setup nginx-php\n#@end\n", "unknown setup 'nginx-php'"),
        ("#@setup nginx-http\n#@setup go-http\n", "section go-http inside nginx-http"),
        ("#@if nope\n#@endif\n", "line 1: unknown flag 'nope'"),
        ("#@if on\n#@if on\n", "line 2: #@if inside #@if on"),
        ("  #@else\n", "line 1: #@else without #@if"),
        ("#@endif\n", "line 1: #@endif without #@if"),
        ("#@if on\nx\n", "#@if on not closed with #@endif"),
    ],
)
def test_broken_templates_are_errors(template, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        drive.render_template(template, ["nginx-http"], {}, {"on": True})


def test_template_flags_keep_one_branch():
    template = "a\n    #@if on\nyes\n    #@else\nno\n    #@endif\nb\n#@if on\nonly\n#@endif\n"
    assert drive.render_template(template, [], {}, {"on": True}) == "a\nyes\nb\nonly\n"
    assert drive.render_template(template, [], {}, {"on": False}) == "a\nno\nb\n"


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


def test_child_pids_without_the_kernels_children_file_scans_parents(tmp_path):
    for pid, ppid in ((10, 1), (11, 10), (12, 10), (13, 11)):
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "stat").write_text(f"{pid} (nginx: a (b) c) S {ppid} 1 1 0\n")
    (tmp_path / "self").mkdir()
    assert drive.child_pids(10, tmp_path) == [11, 12]
    (tmp_path / "10" / "task" / "10").mkdir(parents=True)
    (tmp_path / "10" / "task" / "10" / "children").write_text("12 11 ")
    assert drive.child_pids(10, tmp_path) == [11, 12]


def fake_stat(proc: Path, pid: int, utime: int, stime: int, ppid: int = 1) -> None:
    """Write a /proc/<pid>/stat whose command name has spaces and parentheses, as nginx's can."""
    (proc / str(pid)).mkdir(exist_ok=True)
    fields = ["S", str(ppid), *["0"] * 9, str(utime), str(stime), *["0"] * 8]
    (proc / str(pid) / "stat").write_text(f"{pid} (nginx: worker (x)) {' '.join(fields)}\n")


def test_cpu_ticks_read_utime_and_stime(tmp_path):
    fake_stat(tmp_path, 42, 123, 45)
    assert drive.cpu_ticks(42, tmp_path) == (123, 45)
    assert drive.cpu_ticks(43, tmp_path) is None
    own = drive.cpu_ticks(os.getpid())
    assert own is not None and all(t >= 0 for t in own)


def test_server_pids_are_those_started_and_nginx_children(tmp_path):
    fake_stat(tmp_path, 100, 0, 0)
    fake_stat(tmp_path, 101, 0, 0, ppid=100)
    fake_stat(tmp_path, 102, 0, 0, ppid=100)
    fake_stat(tmp_path, 103, 0, 0, ppid=7)  # somebody else's nginx: never counted
    pids = {"go": 5, "nginx": 100, "nginx_workers": [101], "fasthttp": None}
    assert drive.server_pids(pids, tmp_path) == {"go": [5], "nginx": [100, 101, 102]}
    assert drive.server_pids({"go": 5, "nginx": None, "nginx_workers": [], "fasthttp": 6}, tmp_path) == {"go": [5], "fasthttp": [6]}


def test_cpu_delta_sums_the_group_over_the_measurement():
    before = {1: (100, 50), 2: (10, 10), 3: (5, 5)}
    after = {1: (250, 80), 2: (30, 15), 4: (7, 3)}  # 3 is gone, 4 started meanwhile
    assert drive.cpu_delta(before, after, 100) == {"user_s": 1.77, "system_s": 0.38, "pids": [1, 2, 4]}
    assert drive.cpu_delta(before, {}, 100) is None


def test_cpu_snapshot_leaves_out_processes_that_are_gone(tmp_path):
    fake_stat(tmp_path, 7, 3, 4)
    assert drive.cpu_snapshot({"go": [7], "nginx": [8, 9]}, tmp_path) == {"go": {7: (3, 4)}, "nginx": {}}


def test_cpu_ms_per_1k_requests():
    record = {"processes": {"go": {"user_s": 1.0, "system_s": 0.5}, "fasthttp": None, "wrk": {"user_s": 2.0, "system_s": 1.0}}}
    assert drive.cpu_ms_per_1k_requests(record, 100_000) == {"go": 15.0, "wrk": 30.0}


def test_run_measured_returns_the_childs_own_cpu_and_status(tmp_path):
    burn = "import sys, time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\nprint('out'); print('err', file=sys.stderr); sys.exit(3)"
    started = time.monotonic()
    result = drive.run_measured([sys.executable, "-c", burn], tmp_path / "out", tmp_path / "err")
    assert result.status == 3 and result.signal is None and result.pid > 0
    assert result.user_s + result.system_s >= 0.25
    assert 0.25 <= result.wall_s <= time.monotonic() - started
    assert (tmp_path / "out").read_text() == "out\n" and (tmp_path / "err").read_text() == "err\n"
    killed = drive.run_measured([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"], tmp_path / "o", tmp_path / "e")
    assert killed.status == 128 + 9


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
    assert order[0].split() == drive.shuffled_orders(list(drive.DEFAULT_SETUP_IDS), 1, 3, 1)[0]
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


def documented_cpu_file() -> dict:
    """Return the .cpu.json example of docs/raw-format.md, comments stripped."""
    text = (REPO / "docs" / "raw-format.md").read_text()
    block = text.split("## The CPU file", 1)[1].split("```json\n", 1)[1].split("```", 1)[0]
    return json.loads(re.sub(r"\s+//.*$", "", block, flags=re.M))


def started_run(tmp_path: Path, *options: str) -> Path:
    """Return a run directory made by `plan` and `init` as the script does, with pass 1 started."""
    plan_file = tmp_path / "plan.json"
    done = run_drive("plan", "--root", str(tmp_path), "--save", str(plan_file), "--", "--out", str(tmp_path / "raw"), *options)
    assert done.returncode == 0, done.stderr
    run = Path(run_drive("init", "--plan", str(plan_file), "--command", "x").stdout.strip())
    assert run_drive("pass-start", "--run", str(run), "--gomaxprocs", "1").returncode == 0
    return run


# A stand-in for wrk: prints a real wrk output and burns a little CPU.
FAKE_WRK = (
    "import sys, time\n"
    "end = time.process_time() + 0.2\n"
    "while time.process_time() < end: pass\n"
    "sys.stdout.write(open(sys.argv[1]).read()); print('stderr line', file=sys.stderr)\n"
)


def test_run_wrk_writes_the_output_and_the_documented_cpu_file(tmp_path):
    run = started_run(tmp_path, "--connections", "10,50", "--setups", "go-http,nginx-http", "--pin-client", "0", "--pin-server", "1")
    server = subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(0.001)"])  # "Go"
    try:
        assert run_drive("pass-update", "--run", str(run), "--gomaxprocs", "1", "--go-pid", str(server.pid)).returncode == 0
        name = "nginx-http.gomaxprocs-1.c50.run-1.wrk.txt"
        ids = ("--run", str(run), "--gomaxprocs", "1", "--connections", "50", "--setup", "nginx-http", "--repeat", "1")
        fixture = CAPTURED / "wrk-4.1.0__latency.txt"
        done = run_drive(
            "run-wrk", *ids, "--out", str(run / name), "--stderr", str(tmp_path / "wrk.stderr"),
            "--cpu-file", name.replace(".wrk.txt", ".cpu.json"), "--", sys.executable, "-c", FAKE_WRK, str(fixture),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    finally:
        server.kill()
        server.wait()
    assert (run / name).read_bytes() == fixture.read_bytes() + b"stderr line\n"
    cpu = json.loads((run / name.replace(".wrk.txt", ".cpu.json")).read_text())
    doc = documented_cpu_file()
    assert list(cpu) == list(doc) and list(cpu["processes"]) == list(doc["processes"])
    assert (cpu["file"], cpu["setup"], cpu["gomaxprocs"], cpu["connections"], cpu["repeat"]) == (name, "nginx-http", 1, 50, 1)
    assert cpu["processes"]["go"]["pids"] == [server.pid] and set(cpu["processes"]["go"]) == set(doc["processes"]["go"])
    assert cpu["processes"]["nginx"] is None and cpu["processes"]["fasthttp"] is None  # not started in this pass
    wrk = cpu["processes"]["wrk"]
    assert set(wrk) == set(doc["processes"]["wrk"]) and wrk["threads"] == 2 and wrk["pids"][0] != server.pid
    assert wrk["user_s"] + wrk["system_s"] >= 0.15  # the stand-in's own CPU, not the wrapper's
    assert cpu["wall_s"] >= 0.15 and cpu["clock_ticks_per_s"] == os.sysconf("SC_CLK_TCK")
    assert cpu["pinning"] == {"client": "0", "server": "1"}

    end = run_drive("measure-end", *ids, "--file", name, "--cpu-file", name.replace(".wrk.txt", ".cpu.json"),
                    "--command", "taskset -c 0 wrk --latency ...", "--exit-code", "0", "--started-at", "2026-11-22T16:47:00Z")  # fmt: skip
    assert end.returncode == 0, end.stderr
    missing = run_drive("measure-end", *ids[:-1], "2", "--file", name, "--cpu-file", "nope.cpu.json",
                        "--command", "x", "--exit-code", "0", "--started-at", "2026-11-22T16:47:00Z")  # fmt: skip
    assert missing.returncode == 0, missing.stderr
    measurements = json.loads((run / "manifest.json").read_text())["measurements"]
    assert [(m["connections"], m["cpu_file"]) for m in measurements] == [(50, name.replace(".wrk.txt", ".cpu.json")), (50, None)]
    summary = run_drive("summary", "--run", str(run)).stdout.splitlines()
    assert "GOMAXPROCS=1 c=50 nginx-http       60,042 req/s (median of 2); CPU ms per 1k requests: go " in "\n".join(summary)
    assert summary[0] == "GOMAXPROCS=1 c=10 go-http          no result"


def test_run_wrk_passes_sigterm_on_and_writes_no_cpu_file(tmp_path):
    run = started_run(tmp_path, "--setups", "go-http")
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    marker = tmp_path / "started"
    child = f"import pathlib, time\npathlib.Path({str(marker)!r}).touch()\ntime.sleep(30)"
    args = [sys.executable, "-m", "wrkreport.drive", "run-wrk", "--run", str(run), "--gomaxprocs", "1", "--setup", "go-http",
            "--repeat", "1", "--out", str(run / "x.wrk.txt"), "--stderr", str(tmp_path / "e"), "--cpu-file", "x.cpu.json",
            "--", sys.executable, "-c", child]  # fmt: skip
    proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while not marker.exists():
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.02)
        stand_in = drive.child_pids(proc.pid)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 128 + signal.SIGTERM
    finally:
        proc.kill()
        proc.wait()
    assert len(stand_in) == 1 and drive.cpu_ticks(stand_in[0]) is None, "the measured command must be stopped too"
    assert not (run / "x.cpu.json").exists()


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
