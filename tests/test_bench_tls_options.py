"""Tests of wrkreport.bench.tls_options (issue 22): the TLS options in the driver's plan and nginx configuration: fast, no servers."""

from __future__ import annotations

import re
import subprocess

import pytest

from helpers import REPO, plan
from helpers import render_with as render
from wrkreport.bench.allocation import next_block
from wrkreport.bench.handshake import differences, parse_probe
from wrkreport.bench.nginx import nginx_missing_modules
from wrkreport.bench.parameters import plan_lines
from wrkreport.core import stats
from wrkreport.core.errors import UsageError


def test_setups_tls_selects_go_http_and_the_tls_setups_in_both_connection_modes_on_their_ports():
    p = plan("--setups", "tls,nginx-http")
    assert p["setups"] == [
        "go-http",
        "nginx-http",
        "go-https",
        "nginx-https",
        "nginx-https-unix",
        "go-https-new",
        "nginx-https-new",
        "nginx-https-unix-new",
    ]
    assert p["urls"]["go-https"] == "https://127.0.0.1:8443/" and p["urls"]["nginx-https-unix"] == "https://127.0.0.1:8445/"
    assert p["needed_ports"]["go-https"] == 8443 and p["needed_ports"]["nginx-https"] == 8444
    lines = plan_lines(p)
    assert "tls 1" in lines and "tls_key ecdsa-p256" in lines and "tls_version 1.3" in lines and "tls_resumption 0" in lines
    assert "connection_per_request 0" in lines and "go-https" not in plan()["setups"]
    assert (
        "new_connection.nginx-https-new 1" in lines and "new_connection.nginx-https 0" in lines and "serves.go-https-new go-https" in lines
    )


def test_a_new_connection_setup_loads_its_servers_port_and_binds_nothing_of_its_own():
    p = plan("--setups", "go-http,go-https-new,nginx-https-unix-new", "--port", "nginx-https-unix=9445")
    assert p["urls"]["go-https-new"] == "https://127.0.0.1:8443/" and p["urls"]["nginx-https-unix-new"] == "https://127.0.0.1:9445/"
    assert p["needed_ports"] == {"go-http": 8080, "go-fcgi-tcp": 9001, "go-https": 8443, "nginx-https-unix": 9445}
    assert "port.go-https 8443" in plan_lines(p)  # gohello's -tls-port
    with pytest.raises(UsageError, match="go-https-new=1"):
        plan("--setups", "tls", "--port", "go-https-new=1")  # its server's port is the one to set


def test_ratios_divide_by_go_crypto_tls_in_the_same_connection_mode_in_the_driver_and_the_reader():
    from wrkreport.core.setups import SETUP_IDS, baseline_of
    from wrkreport.core.setups import baseline_of as reader_baseline_of

    assert [baseline_of(s) for s in ("go-https", "nginx-https", "go-https-new", "nginx-https-new", "nginx-https-unix-new")] == [
        "go-http",
        "go-https",
        "go-https",
        "go-https-new",
        "go-https-new",
    ]
    assert all(baseline_of(s) == reader_baseline_of(s) for s in SETUP_IDS)


def test_tls_options_and_their_variables():
    p = plan("--setups", "tls", "--tls-key", "rsa2048", "--tls-version", "1.2", "--tls-resumption", "on", "--connection-per-request")
    assert (p["tls_key"], p["tls_version"], p["tls_resumption"], p["connection_per_request"]) == ("rsa2048", "1.2", True, True)
    assert p["tls_cipher"] == "ECDHE-RSA-AES128-GCM-SHA256" and p["tls_key_args"] == ["rsa:2048"]
    env = {"BENCH_TLS_KEY": "rsa2048", "BENCH_CONNECTION_PER_REQUEST": "1", "BENCH_TLS_RESUMPTION": "on"}
    q = plan("--setups", "tls", env=env)
    assert (q["tls_key"], q["connection_per_request"], q["tls_resumption"]) == ("rsa2048", True, True)
    assert plan("--connection-per-request")["connection_per_request"] is True  # plain setups too
    assert any("-new setups measure what their servers' setups do" in w for w in p["warnings"])  # tls has them
    assert not plan("--setups", "tls")["warnings"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (("--setups", "tls", "--tls-key", "dsa"), "--tls-key 'dsa': choose one of ecdsa-p256, rsa2048"),
        (("--setups", "tls", "--tls-version", "1.1"), "--tls-version '1.1': choose one of 1.3, 1.2"),
        (("--setups", "tls", "--tls-resumption", "maybe"), "--tls-resumption 'maybe': choose one of off, on"),
        (("--setups", "tls", "--load-generator", "ab"), "measured with wrk"),
        # Measured: ab -c100 without -k got 129 B per response from go-http, 147 B from nginx (Connection: close).
        (("--connection-per-request", "--load-generator", "ab"), "--connection-per-request needs wrk: ApacheBench sends HTTP/1.0"),
    ],
)
def test_bad_tls_options_are_one_line_usage_errors(argv, message):
    with pytest.raises(UsageError, match=message):
        plan(*argv)


def test_nginx_gets_the_same_tls_as_go(tmp_path):
    conf = render(tmp_path, "--setups", "tls")
    assert "listen 127.0.0.1:8444 ssl;" in conf and "listen 127.0.0.1:8445 ssl;" in conf
    assert conf.count("ssl_certificate_key /tmp/w/tls/key.pem;") == 2 and conf.count("ssl_protocols TLSv1.3;") == 2
    assert "ssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256;" in conf and "ssl_ecdh_curve X25519;" in conf
    assert "ssl_session_cache off;" in conf and "ssl_session_tickets off;" in conf and "http2" not in conf
    assert "access_log /tmp/w/nginx/tls-resumed.nginx-https.log tls_resumed if=$tls_resumed;" in conf
    on = render(tmp_path, "--setups", "tls", "--tls-version", "1.2", "--tls-resumption", "on")
    assert "ssl_protocols TLSv1.2;" in on and "ssl_ciphers ECDHE-ECDSA-AES128-GCM-SHA256;" in on
    assert "ssl_session_tickets on;" in on and "ssl_session_cache shared:TLS:10m;" in on
    plain = render(tmp_path)
    assert "ssl" not in plain and "tls_resumed" not in plain
    new_only = render(tmp_path, "--setups", "go-https-new,nginx-https-new")  # the server block of the setup it loads
    assert "listen 127.0.0.1:8444 ssl;" in new_only and "8445" not in new_only


def test_nginx_without_the_ssl_module_is_refused():
    assert nginx_missing_modules("configure arguments: --with-http_ssl_module", ["nginx-https"]) == []
    assert nginx_missing_modules("configure arguments: --prefix=/x", ["nginx-https", "nginx-http"]) == [
        "nginx-https needs nginx's http_ssl module, which this nginx was built without"
    ]


def test_the_handshake_probe_is_read_and_compared():
    text = (
        "CONNECTION ESTABLISHED\nProtocol version: TLSv1.2\nCiphersuite: ECDHE-RSA-AES128-GCM-SHA256\n"
        "Signature type: RSA-PSS\nServer Temp Key: X25519, 253 bits\n"
    )
    probe = parse_probe(text)
    assert probe == {
        "protocol": "TLSv1.2",
        "cipher": "ECDHE-RSA-AES128-GCM-SHA256",
        "signature": "RSA-PSS",
        "group": "X25519",
        "alpn": None,
        "error": None,
    }
    reference = {"setup": "go-https", "protocol": "TLSv1.3", "cipher": "TLS_AES_128_GCM_SHA256", "group": "X25519", "signature": "RSA-PSS"}
    assert differences(probe, reference) == [
        "protocol TLSv1.2 (go-https: TLSv1.3)",
        "cipher ECDHE-RSA-AES128-GCM-SHA256 (go-https: TLS_AES_128_GCM_SHA256)",
    ]
    assert parse_probe("40C7:error:0A000126:SSL routines::unexpected eof\n")["error"].startswith("no TLS handshake: 40C7:error")


def test_the_allocation_measures_go_https_beside_a_tls_setup_it_chooses():
    wide = stats.Interval(1.0, 0.9, 1.1, 9, "block", 7)
    n, setups, _ = next_block({(1, 100, "nginx-https", "rps"): wide}, {1: 7}, [1], "go-http", 0.05, 7)
    assert setups == ("go-http", "go-https", "nginx-https")


# --- gohello's TLS flags (src/driver/tls.sh go_tls_args): a listener only for a setup the run measures ---------

GOHELLO_FLAGS = set(re.findall(r'fs\.\w+Var\(&[\w.]+, "([\w-]+)"', (REPO / "src" / "gohello" / "main.go").read_text()))


def go_tls_args(*options: str) -> list[str]:
    """Return gohello's TLS flags as the driver's go_tls_args gives them, PLAN read from the plan of these options as read_plan does."""
    script = (
        'set -euo pipefail\ndeclare -A PLAN=()\nwhile read -r key value; do PLAN["${key}"]="${value}"; done\n'
        'TLS_DIR=/w/tls TLS_STATS_SOCKET=/w/gotls.sock\nsource "$1"\ngo_tls_args\nprintf "%s\\n" "${GO_TLS_ARGS[@]}"\n'
    )
    done = subprocess.run(
        ["bash", "-c", script, "bash", str(REPO / "src" / "driver" / "tls.sh")],
        input="\n".join(plan_lines(plan(*options))) + "\n",
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.split()


@pytest.mark.parametrize(
    "setups, https_port, h2_port",
    [
        ("h2", None, "8446"),
        ("tls", "8443", None),
        ("tls,h2", "8443", "8446"),
        ("go-http,go-https-new", "8443", None),
        ("go-http,nginx-h2", None, None),
    ],
)
def test_gohello_opens_a_tls_listener_only_for_a_setup_the_run_measures(setups, https_port, h2_port):
    args = go_tls_args("--setups", setups)
    assert ("-tls-port" in args) == (https_port is not None) and ("-h2" in args) == (h2_port is not None)
    if https_port:
        assert args[args.index("-tls-port") + 1] == https_port
    if h2_port:
        assert args[args.index("-h2-port") + 1] == h2_port
    # An h2 run (go-h2 without go-https) asks for go-h2 alone: no HTTP/1.1 TLS listener on a free port.
    assert ("-h2-only" in args) == (h2_port is not None and https_port is None)
    assert {a.lstrip("-") for a in args if a.startswith("-")} <= GOHELLO_FLAGS
    if args:
        assert args[args.index("-tls-cert") + 1] == "/w/tls/cert.pem" and args[args.index("-tls-stats-socket") + 1] == "/w/gotls.sock"


def test_no_tls_flags_for_a_run_without_a_go_tls_setup():
    assert go_tls_args() == [] and go_tls_args("--setups", "go-http,nginx-https") == []
