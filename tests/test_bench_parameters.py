"""Tests of wrkreport.bench.parameters: the driver's plan and its option values (bench.values, bench.profiles): fast, no servers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers import plan
from wrkreport.bench.manifest import shuffled_orders
from wrkreport.bench.parameters import build_plan, estimate_seconds, plan_lines, plan_parser
from wrkreport.bench.profiles import (
    ENV_BODY_BYTES,
    ENV_GOMAXPROCS,
    ENV_HANDLER_DELAY,
    ENV_OUT,
    ENV_PIN_CLIENT,
    ENV_PIN_SERVER,
    ENV_PORTS,
    ENV_PROFILE,
    ENV_SEED,
    ENV_SETUPS,
    ENV_UPSTREAM_KEEPALIVE,
    MEASUREMENT_OVERHEAD_S,
    PARAMS,
    PASS_OVERHEAD_S,
    VERDICT_BLOCKS_EXPECTED,
    body_text,
    expect_header_bytes,
)
from wrkreport.bench.rate_options import rate_phase_seconds
from wrkreport.bench.stopping_plan import verdict_seconds
from wrkreport.bench.values import format_cpu_list, format_duration, format_rate, parse_cpu_list, parse_duration_ns
from wrkreport.core.errors import UsageError
from wrkreport.core.sequential import DEFAULT_LAST_LOOK, FIRST_LOOK, Design
from wrkreport.core.setups import SETUP_IDS, SETUPS
from wrkreport.runs.sidecars import WRK_FILE

REPO = Path(__file__).resolve().parent.parent
HEADERS_200 = (
    b"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 12\r\nContent-Type: text/plain\r\n"
    b"Server: gophr\r\nDate: Sun, 22 Nov 2026 16:47:00 GMT\r\n\r\n"
)


# --- plan ---------------------------------------------------------------------------------


def test_default_plan_matches_the_documented_defaults():
    p = plan()
    assert p["profile"] == "default"
    assert (p["threads"], p["connections"], p["duration_s"], p["repeats"], p["warmup_s"], p["wrk_timeout_s"]) == (2, 100, 1, None, 1, 2)
    # The block design with the verdict rule: blocks of 3 rounds, repeated intervals from the first look (4 blocks per
    # GOMAXPROCS) to the ceiling (10), the cheapest connection's ratios within +/-10%, then the fixed-rate phase's 4 blocks
    # (no capacity search without --slo), within 1.25 x what the targets are expected to need (test_the_default_max_time_...).
    assert (p["rounds_per_block"], p["blocks"], p["adaptive"], p["min_blocks"], p["max_blocks"]) == (
        3,
        None,
        True,
        FIRST_LOOK,
        DEFAULT_LAST_LOOK,
    )
    assert (p["precision_pct"], p["precision_given"], p["capacity_precision_pct"], p["rate_blocks"], p["rate_blocks_max"], p["slo"]) == (
        10.0,
        False,
        15.0,
        4,
        4,
        None,
    )
    design = Design.repeated(DEFAULT_LAST_LOOK, first=FIRST_LOOK)
    assert p["intervals"] == {
        **design.record(),
        "rule": "verdict",
        "comparisons": 6,
        "tie_margin": 0.05,
        "family_nominal_alpha": round(design.family(6).nominal, 8),
    }  # 3 pairs of connections at 2 GOMAXPROCS values
    assert p["gomaxprocs"] == [1, 2]
    assert p["setups"] == ["go-http", "nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix"]
    assert p["ports"] == {"go-http": 8080, "nginx-http": 8081, "nginx-fcgi-tcp": 8082, "nginx-fcgi-unix": 8083, "go-fcgi-tcp": 9001}
    assert p["urls"]["nginx-fcgi-unix"] == "http://127.0.0.1:8083/"
    assert p["out"] == "/repo/raw"
    assert p["measurements"] == 2 * 4 * VERDICT_BLOCKS_EXPECTED * 3  # expected
    assert p["tune"] is False and p["seed"] == 7
    assert p["expect_header_bytes"] == 141
    assert p["connections_levels"] == [100] and p["connections"] == 100
    assert (p["body_bytes"], p["handler_delay_ms"], p["upstream_keepalive"]) == (12, 0, True)
    assert (p["pin_client"], p["pin_server"], p["warnings"]) == (None, None, [])


def test_the_default_max_time_is_what_the_targets_need_with_room_and_a_given_one_caps_it():
    """Issue 42: a run plans its time by what it measures; --max-time given caps it, and then the phase keeps its least blocks."""
    for p in (plan(), plan("--setups", "h2"), plan("--setups", "tls"), plan("--slo", "p99=10ms")):
        assert p["max_time_s"] == round(1.25 * p["targets_s"]) and p["estimate_s"] == p["targets_s"] <= p["max_time_s"]
        assert p["rate_phase_s"] == round(
            rate_phase_seconds(p, p["rate_blocks_expected"])
        ) and "max_time_note the default: 1.25 x that" in plan_lines(p)
    short = plan("--max-time", "8m", "--slo", "p99=10ms")
    assert short["max_time_s"] == 480 < short["targets_s"]
    assert short["rate_phase_s"] == round(rate_phase_seconds(short)) < plan("--slo", "p99=10ms")["rate_phase_s"]
    assert short["estimate_s"] == min(480, round(verdict_seconds(short)) + short["rate_phase_s"]) and "max_time_note given" in plan_lines(
        short
    )
    small = plan("--setups", "go-http,nginx-http", "--gomaxprocs", "1")
    assert small["max_time_s"] == round(1.25 * small["targets_s"]) < 460  # no floor any more: a small run is not held back


def test_capacity_precision_is_an_option_and_a_variable_and_the_fixed_designs_have_fixed_phases():
    assert plan("--capacity-precision", "10")["capacity_precision_pct"] == 10.0
    assert plan(env={"BENCH_CAPACITY_PRECISION": "20"})["capacity_precision_pct"] == 20.0
    with pytest.raises(UsageError, match="--capacity-precision"):
        plan("--capacity-precision", "x")
    for fixed in (plan("--blocks", "3"), plan("--quick")):
        assert fixed["rate_blocks_max"] == fixed["rate_blocks"] and fixed["max_time_s"] is None


def test_gomaxprocs_is_deduplicated_on_one_core():
    assert plan(nproc=1)["gomaxprocs"] == [1]
    assert plan(nproc=8)["gomaxprocs"] == [1, 8]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [(["--quick"], (2, 100, 1, 1, 1)), (["--profile", "quick"], (2, 100, 1, 1, 1)), (["--profile", "article"], (100, 5000, 30, 1, 5))],
)
def test_profiles(argv, expected):
    p = plan(*argv)
    assert (p["threads"], p["connections"], p["duration_s"], p["repeats"], p["warmup_s"]) == expected
    assert (p["blocks"], p["rounds_per_block"], p["adaptive"], p["max_time_s"]) == (1, 1, False, None)  # one block, no stopping rule


@pytest.mark.parametrize(
    ("argv", "env", "expected"),
    [
        (["--repeats", "10"], {}, (10, 4, 3, False)),  # 10 rounds in blocks of 3: 3 + 3 + 3 + 1
        (["--blocks", "2", "--rounds-per-block", "2"], {}, (4, 2, 2, False)),
        ([], {"BENCH_BLOCKS": "3", "BENCH_ROUNDS_PER_BLOCK": "1"}, (3, 3, 1, False)),
        (["--quick", "--repeats", "5"], {}, (5, 5, 1, False)),
        ([], {}, (None, None, 3, True)),
    ],
)
def test_block_design(argv, env, expected):
    p = plan(*argv, env=env)
    assert (p["repeats"], p["blocks"], p["rounds_per_block"], p["adaptive"]) == expected


@pytest.mark.parametrize(
    ("argv", "env", "expected"),
    [
        (["--precision", "2", "--max-time", "30m"], {}, (2.0, 1800)),
        ([], {"BENCH_PRECISION": "2.5%", "BENCH_MAX_TIME": "90s"}, (2.5, 90)),
        (["--max-time", "1h"], {"BENCH_MAX_TIME": "5"}, (10.0, 3600)),  # without --precision: the verdict rule's +/-10%
        (["--max-time", "20"], {}, (10.0, 20)),
    ],
)
def test_precision_and_max_time(argv, env, expected):
    p = plan(*argv, env=env)
    assert (p["precision_pct"], p["max_time_s"]) == expected
    assert p["warnings"] == []


def test_precision_with_a_fixed_design_is_a_warning_not_a_setting():
    p = plan("--quick", "--max-time", "1m")
    assert p["max_time_s"] is None
    assert p["warnings"] == [
        "--precision and --max-time steer the stopping rule, which a fixed design (1 block(s) per GOMAXPROCS) does not use"
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--precision", "0"], "--precision must be a percentage above 0 and at most 100, e.g. 5 or 2.5, not '0'"),
        (["--precision", "five"], "--precision must be a percentage above 0 and at most 100, e.g. 5 or 2.5, not 'five'"),
        (["--max-time", "6 min"], "--max-time must be a duration like 6m, 90s or 1h, not '6 min'"),
        (["--max-time", "0s"], "--max-time must be between 1s and 168h, not '0s'"),
        (["--blocks", "2", "--repeats", "4"], "give --blocks or --repeats, not both"),
        (["--blocks", "5000", "--rounds-per-block", "2"], "--blocks x --rounds-per-block must be at most 9999 rounds, not 10000"),
        (["--rounds-per-block", "0"], "--rounds-per-block must be at least 1, not 0"),
    ],
)
def test_bad_design_options_are_refused(argv, message):
    with pytest.raises(UsageError, match=re.escape(message)):
        plan(*argv)


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
    assert p["measurements"] == 2 * 2 * VERDICT_BLOCKS_EXPECTED * 3


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
            "unknown setup 'nginx-php'; choose from go-{http,fasthttp}, nginx-{http,fcgi-tcp,fcgi-unix,http-unix,static}, node-http, "
            "{haproxy,caddy,apache}-{http,fcgi-tcp,fcgi-unix} (or all), tls, h2 or front-ends",
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
        (["--handler-delay", "-1ms"], "--handler-delay must be a duration like 1ms, 500us or 0, not '-1ms'"),
        (["--threads", "-2"], "--threads must be a whole number, not '-2'"),
        (["--seed", "-5"], "--seed must be a whole number, not '-5'"),
        (["--threads", "--quick"], "argument --threads: expected one argument"),
        (["--handler-delay", "2m"], "--handler-delay must be a duration like 1ms, 500us or 0, not '2m'"),
        (["--handler-delay", "61s"], "--handler-delay 61s is longer than 60s"),
        (["--body-bytes", "0"], "--body-bytes must be at least 1, not 0"),
        (["--body-bytes", "1048577"], "--body-bytes must be at most 1048576 (1 MiB), not 1048577"),
        (["--port", "nginx-static=9001", "--setups", "all"], "go-fcgi-tcp and nginx-static are both given port 9001"),
        (["--ready-timeout", "0"], "--ready-timeout must be at least 1, not 0"),
        (["--ready-timeout", "2m"], "--ready-timeout must be a whole number"),
        (["--ready-timeout", "3601"], "--ready-timeout must be at most 3600"),
    ],
)
def test_bad_options_are_usage_errors(argv, message):
    with pytest.raises(UsageError) as excinfo:
        plan(*argv)
    assert str(excinfo.value).startswith(message)


@pytest.mark.parametrize(
    "argv, env, expected",
    [
        ((), {}, 10),
        (("--ready-timeout", "30"), {}, 30),
        (("--ready-timeout", "2s"), {}, 2),
        ((), {"BENCH_READY_TIMEOUT": "45"}, 45),
        (("--ready-timeout", "5"), {"BENCH_READY_TIMEOUT": "45"}, 5),
    ],
)
def test_the_ready_timeout_is_ten_seconds_unless_given_and_goes_to_the_script(argv, env, expected):
    p = plan(*argv, env=env)
    assert p["ready_timeout_s"] == expected and f"ready_timeout_s {expected}" in plan_lines(p)


def test_connection_levels_sweep():
    p = plan("--connections", "10,100,1000,100", "--setups", "go-http,nginx-http")
    assert p["connections_levels"] == [10, 100, 1000]  # given order, deduplicated
    assert p["connections"] is None  # several levels: no single value
    assert p["measurements"] == 2 * 3 * 2 * VERDICT_BLOCKS_EXPECTED * 3
    assert p["needed_fds"] == 2 * 1000 + 256
    assert plan("--connections", "50", env={"BENCH_CONNECTIONS": "1,2"})["connections_levels"] == [50]
    assert plan(env={"BENCH_CONNECTIONS": "20 40"})["connections_levels"] == [20, 40]


def test_setups_all_and_the_new_setups_ports():
    p = plan("--setups", "all")
    # all: every setup but the TLS, h2 and --app ones: the article's four, four more, and the front ends' nine (issue 44)
    assert p["setups"] == [*SETUP_IDS[:8], *SETUP_IDS[-9:]] and len(p["setups"]) == 17
    assert p["ports"] == {
        "go-http": 8080, "nginx-http": 8081, "nginx-fcgi-tcp": 8082, "nginx-fcgi-unix": 8083,
        "nginx-http-unix": 8084, "go-fasthttp": 8085, "nginx-static": 8086, "node-http": 8087, "go-fcgi-tcp": 9001,
        "haproxy-http": 8093, "haproxy-fcgi-tcp": 8094, "haproxy-fcgi-unix": 8095, "caddy-http": 8096, "caddy-fcgi-tcp": 8097,
        "caddy-fcgi-unix": 8098, "apache-http": 8099, "apache-fcgi-tcp": 8100, "apache-fcgi-unix": 8101,
    }  # fmt: skip
    assert p["needed_ports"] == {name: port for name, port in p["ports"].items()}
    assert p["urls"]["go-fasthttp"] == "http://127.0.0.1:8085/"
    q = plan("--setups", "go-fasthttp,nginx-static", "--port", "nginx-static=18086,nginx-http-unix=18084")
    assert q["setups"] == ["go-fasthttp", "nginx-static"]
    assert q["ports"]["nginx-static"] == 18086 and "nginx-http-unix" not in q["ports"]  # kept only when chosen
    assert q["needed_ports"] == {"go-fasthttp": 8085, "nginx-static": 18086}  # no setup needs gohello: its ports stay free
    lines = plan_lines(q)
    assert "fasthttp_setups go-fasthttp" in lines and "nginx_setups nginx-static" in lines
    assert not any(line.startswith("go_setups") for line in lines)


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
    assert parse_cpu_list(text, "--pin-client") == cpus
    assert parse_cpu_list(format_cpu_list(cpus), "x") == cpus


def test_format_cpu_list():
    assert format_cpu_list([0, 1, 2, 5, 7, 8]) == "0-2,5,7-8"
    assert format_cpu_list([]) == ""


@pytest.mark.parametrize(
    ("text", "ns"),
    [("0", 0), ("1ms", 10**6), ("500us", 500_000), ("500µs", 500_000), ("1.5ms", 1_500_000), ("2s", 2 * 10**9), ("250ns", 250)],
)
def test_handler_delay_durations(text, ns):
    assert parse_duration_ns(text, "--handler-delay") == ns


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


@pytest.mark.parametrize(
    ("body_bytes", "header_bytes"), [(1, 140), (9, 140), (12, 141), (99, 141), (100, 142), (4096, 143), (1048576, 146)]
)
def test_expected_header_bytes_follow_the_content_length_digits(body_bytes, header_bytes):
    assert expect_header_bytes(body_bytes) == header_bytes
    assert len(HEADERS_200.replace(b"Content-Length: 12", f"Content-Length: {body_bytes}".encode())) == header_bytes


def test_body_text_repeats_the_article_line():
    assert body_text(12) == "Hello World\n"
    assert body_text(5) == "Hello"
    assert body_text(30) == "Hello World\nHello World\nHello "
    assert len(body_text(4096)) == 4096


def test_tune_is_accepted_as_root():
    assert plan("--tune", euid=0)["tune"] is True


def test_seed_is_random_and_recorded_when_not_given():
    seeds = {build_plan([], {}, Path("/r"), 2, 1000)["seed"] for _ in range(5)}
    assert len(seeds) > 1


def test_plan_lines_for_the_script():
    lines = plan_lines(plan("--setups", "go-http,nginx-fcgi-unix", "--out", "/tmp/x y"))
    assert "setups go-http nginx-fcgi-unix" in lines
    assert "nginx_setups nginx-fcgi-unix" in lines and "go_setups go-http nginx-fcgi-unix" in lines
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
    lines = plan_lines(
        plan("--setups", "all", "--connections", "10,100", "--pin-client", "0", "--pin-server", "1", "--handler-delay", "1.5ms")
    )
    assert "connections 10 100" in lines and "connections_max 100" in lines and "sweep 1" in lines
    assert "nginx_setups nginx-http nginx-fcgi-tcp nginx-fcgi-unix nginx-http-unix nginx-static" in lines
    assert "fasthttp_setups go-fasthttp" in lines
    assert "server.go-fasthttp fasthttp" in lines and "needs.go-fasthttp fasthttp" in lines
    assert "server.nginx-static nginx" in lines and "needs.nginx-static nginx" in lines
    assert "pin_client 0" in lines and "pin_server 1" in lines
    assert "handler_delay 1500000ns" in lines
    assert all(re.fullmatch(r"[a-z_.0-9-]+ \S.*", line) for line in lines)


def test_every_option_in_help_is_accepted_and_every_option_is_in_help():
    usage = (REPO / "src" / "driver" / "usage.txt").read_text()  # the one place the usage text lives
    in_help = set(re.findall(r"^  (--[a-z-]+)", usage, re.M))
    accepted = {o for action in plan_parser()._actions for o in action.option_strings}
    assert in_help == accepted
    for param in PARAMS:
        assert f"[{param.env}]" in usage
    for env in (ENV_PROFILE, ENV_GOMAXPROCS, ENV_SETUPS, ENV_OUT, ENV_SEED):
        assert f"[{env}]" in usage
    for env in (ENV_PIN_CLIENT, ENV_PIN_SERVER, ENV_HANDLER_DELAY, ENV_BODY_BYTES):
        assert f"[{env}]" in usage
    assert f"[{ENV_PORTS}=" in usage
    assert f"[{ENV_UPSTREAM_KEEPALIVE}=0]" in usage
    for setup in SETUPS:  # a new-connection setup has its server's port, given under that name
        assert setup.id in usage and f"{setup.served_by} {setup.default_port}" in " ".join(usage.split())


# --- small helpers ------------------------------------------------------------------------


@pytest.mark.parametrize(("seconds", "text"), [(0, "0s"), (42, "42s"), (59.6, "1m 00s"), (190, "3m 10s"), (3725, "1h 02m")])
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text


def test_format_rate():
    assert format_rate(14812.4) == "14,812"
    assert format_rate(999.5) == "1,000"


def test_shuffled_orders_are_reproducible_permutations():
    setups = list(SETUP_IDS)
    a = shuffled_orders(setups, 5, seed=42, gomaxprocs=2)
    assert a == shuffled_orders(setups, 5, seed=42, gomaxprocs=2)
    assert len(a) == 5 and all(sorted(order) == sorted(setups) for order in a)
    assert len({tuple(order) for order in a}) > 1  # not one order repeated
    assert a != shuffled_orders(setups, 5, seed=43, gomaxprocs=2)
    assert a != shuffled_orders(setups, 5, seed=42, gomaxprocs=1)


def test_estimate_counts_down_to_zero():
    p = plan("--repeats", "5")
    assert estimate_seconds(p, 40, 0) == 0
    assert estimate_seconds(p, 0, 2) > estimate_seconds(p, 20, 1) > estimate_seconds(p, 39, 0) > 0


def test_estimate_of_a_sweep_counts_a_warm_up_per_level():
    one, three = plan("--setups", "all", "--repeats", "5"), plan("--setups", "all", "--connections", "10,100,1000", "--repeats", "5")
    assert three["measurements"] == 3 * one["measurements"] == 3 * 17 * 2 * 5  # 17 setups, 2 GOMAXPROCS values, 5 repeats
    per_level = 17 * (1 + MEASUREMENT_OVERHEAD_S)
    assert estimate_seconds(three, 0, 2) - 3 * estimate_seconds(one, 0, 2) == pytest.approx(-4 * PASS_OVERHEAD_S)
    assert estimate_seconds(three, 3 * 170, 0, 1) == pytest.approx(per_level)


# --- limits: what the reader's file-name pattern accepts, and numbers too long to convert ----

BIG = "9" * 5000  # over Python's 4,300-digit conversion limit


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--gomaxprocs", "1,10000"], "--gomaxprocs value must be at most 9999, not '10000'"),
        (["--repeats", "10000"], "--repeats must be at most 9999, not '10000'"),
        (["--connections", "10,10000000"], "--connections value must be at most 9999999, not '10000000'"),
        (["--threads", BIG], f"--threads must be at most 100000, not {BIG[:40]!r}... (5000 characters)"),
        (["--duration", BIG + "s"], f"--duration must be at most 86400, not {BIG[:40]!r}... (5000 characters)"),
        (["--seed", BIG], "--seed must be at most 18446744073709551615, not '9999"),
        (["--body-bytes", BIG], "--body-bytes must be at most 9223372036854775807, not '9999"),
        (["--port", f"nginx-http={BIG}"], "--port nginx-http must be at most 9223372036854775807, not '9999"),
        (["--pin-client", f"0-{BIG}"], "--pin-client '0-9999"),
        (["--pin-client", "0-100000000"], "--pin-client '0-100000000': CPU numbers go up to 65535 at most"),
        (["--handler-delay", BIG + "ms"], f"--handler-delay {BIG[:40]}... (5002 characters) is longer than 60s"),
        (["--threads", "x" * 5000], f"--threads must be a whole number, not {'x' * 40!r}... (5000 characters)"),
    ],
)
def test_limits_and_huge_numbers_are_usage_errors(argv, message):
    with pytest.raises(UsageError) as excinfo:
        plan(*argv)
    assert str(excinfo.value).startswith(message) and len(str(excinfo.value)) < 200


def test_the_largest_accepted_values_make_file_names_the_reader_takes():
    p = plan("--gomaxprocs", "9999", "--repeats", "9999", "--connections", "10,9999999", "--seed", "000000000000000000000000000007")
    assert (p["gomaxprocs"], p["repeats"], p["connections_levels"], p["seed"]) == ([9999], 9999, [10, 9999999], 7)
    name = f"nginx-http.gomaxprocs-{max(p['gomaxprocs'])}.c{max(p['connections_levels'])}.run-{p['repeats']}.wrk.txt"
    assert WRK_FILE.fullmatch(name)


@pytest.mark.parametrize("char", ['"', "'", ";", "$", "\n", "{", "}", "\\", "`", "#", "\x1b"])
def test_out_with_a_character_nginx_or_the_shell_would_read_is_refused(char):
    with pytest.raises(UsageError) as excinfo:
        plan("--out", f"/tmp/a{char}b")
    message = str(excinfo.value)
    assert message.startswith(
        f"--out {'/tmp/a' + char + 'b'!r}: the character {char!r} would be read by nginx's configuration or the shell"
    )
    assert "\n" not in message and "\x1b" not in message  # one line, nothing raw to the terminal
    with pytest.raises(UsageError, match="^BENCH_OUT "):
        plan(env={"BENCH_OUT": f"/tmp/x{char}"})


def test_out_with_spaces_is_fine_and_made_absolute():
    assert plan("--out", "/tmp/x y")["out"] == "/tmp/x y"
    assert plan("--out", "rel")["out"] == str(Path("rel").resolve())


# --- the load generator ---------------------------------------------------------------------


def test_load_generator_is_wrk_by_default_ab_by_option_or_variable_with_one_thread():
    assert plan()["load_generator"] == "wrk" and plan()["threads"] == 2
    ab = plan("--load-generator", "ab")
    assert (ab["load_generator"], ab["threads"], ab["warnings"]) == ("ab", 1, [])  # ab is single-threaded
    assert plan(env={"BENCH_LOAD_GENERATOR": "ab"})["load_generator"] == "ab"
    assert plan("--load-generator", "wrk", env={"BENCH_LOAD_GENERATOR": "ab"})["load_generator"] == "wrk"  # the option wins
    lines = plan_lines(ab)
    assert "load_generator ab" in lines and "raw_suffix .ab.txt" in lines and "threads 1" in lines
    assert "raw_suffix .wrk.txt" in plan_lines(plan())
    warned = plan("--load-generator", "ab", "--threads", "4")
    assert warned["threads"] == 1 and warned["warnings"] == ["--load-generator ab runs one thread: --threads 4 is not used"]


@pytest.mark.parametrize(
    ("argv", "env", "message"),
    [
        (["--load-generator", "siege"], {}, "--load-generator 'siege': choose one of wrk, ab, h2load"),
        ([], {"BENCH_LOAD_GENERATOR": "webbench"}, "BENCH_LOAD_GENERATOR 'webbench': choose one of wrk, ab, h2load"),
        (
            ["--load-generator", "ab", "--connections", "20001"],
            {},
            "--load-generator ab takes at most 20000 connections (ab -c), not 20001",
        ),
    ],
)
def test_bad_load_generator_is_a_usage_error(argv, env, message):
    with pytest.raises(UsageError) as excinfo:
        plan(*argv, env=env)
    assert str(excinfo.value) == message


def test_node_http_needs_only_the_node_server_and_its_port():
    p = plan("--setups", "node-http", "--port", "node-http=18087")
    assert p["needed_ports"] == {"node-http": 18087} and p["urls"]["node-http"] == "http://127.0.0.1:18087/"
    lines = plan_lines(p)
    assert "node_setups node-http" in lines and "server.node-http node" in lines and "needs.node-http node" in lines
    assert not any(line.startswith(("go_setups", "nginx_setups")) for line in lines)


def test_the_plan_says_what_the_precision_targets_need():
    default, h2 = plan(), plan("--setups", "h2")
    for p in (default, h2):
        throughput = verdict_seconds(p)  # the blocks a verdict is expected to take: every setup to the first look, then the cheapest alone
        assert p["targets_s"] == round(throughput) + round(rate_phase_seconds(p, p["rate_blocks_expected"])) == p["estimate_s"]
    assert h2["targets_s"] > default["targets_s"]  # seven setups' throughput blocks
    assert f"targets {format_duration(default['targets_s'])}" in plan_lines(default)
