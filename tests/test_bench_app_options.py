"""Tests of wrkreport.bench.app_options: --app in the plan, which headers are secret, and how they are redacted."""

from __future__ import annotations

import pytest

from helpers import plan
from wrkreport.bench.app_options import bash_quoted, is_secret, redact, redact_argv, redacted_command_line, shown_header
from wrkreport.bench.parameters import plan_lines
from wrkreport.core.errors import UsageError
from wrkreport.core.setups import baseline_of

APP = ["--app", "python3 app.py {port}"]


@pytest.mark.parametrize(
    "name",
    [
        "Authorization",
        "authorization",
        "Proxy-Authorization",
        "Cookie",
        "X-API-Key",
        "X-Auth-Token",
        "Client-Secret",
        "X-Password",
        "Set-Cookie",
        "X-Session-Id",
    ],
)
def test_a_header_whose_name_says_secret_is_secret(name):
    assert is_secret(name)
    assert shown_header(f"{name}: abc def") == f"{name}: <redacted>"


@pytest.mark.parametrize("name", ["Host", "Accept", "X-Request-Id", "Content-Type"])
def test_other_headers_are_shown(name):
    assert not is_secret(name) and shown_header(f"{name}: abc") == f"{name}: abc"


def test_redact_finds_a_value_as_given_quoted_or_as_bash_printf_q_writes_it():
    value = "Bearer a b;c,d!"
    assert bash_quoted(value) == "Bearer\\ a\\ b\\;c\\,d\\!"
    for text in (value, f"'{value}'", bash_quoted(value)):
        assert redact(f"x {text} y", [value]) == "x <redacted> y"
    assert redact_argv(["wrk", "-H", "Authorization: Bearer x", "-H", "Host: h"]) == [
        "wrk",
        "-H",
        "Authorization: <redacted>",
        "-H",
        "Host: h",
    ]


def test_the_plan_of_an_app_run_chooses_its_setups_and_keeps_the_secret_out_of_the_command_line():
    found = plan(*APP, "--app-path", "/api?x=1", "--app-header", "Authorization: Bearer K1", "--app-header", "Host: example.org")
    assert found["setups"] == ["app", "nginx-app"] and baseline_of("nginx-app") == "app"
    assert found["urls"]["nginx-app"].endswith(":8089/api?x=1") and found["ports"]["app"] == 8088
    lines = plan_lines(found)
    assert "app_header.0 Authorization: Bearer K1" in lines and "app_shown.app python3 app.py {port}" in lines
    assert (
        redacted_command_line("./run_bench.sh --app-header Authorization:\\ Bearer\\ K1", found)
        == "./run_bench.sh --app-header Authorization:\\ <redacted>"
    )


def test_setups_may_add_the_go_ones_and_app_comes_with_nginx_app():
    assert plan(*APP, "--setups", "go-http,nginx-app")["setups"] == ["go-http", "app", "nginx-app"]


UNIX = ["--app-unix", "python3 app.py --unix {socket}"]
FCGI_TCP = ["--app-fcgi", "python3 app.py --fcgi {port}"]
FCGI_UNIX = ["--app-fcgi", "python3 app.py --fcgi {socket}"]


def test_app_unix_and_app_fcgi_add_their_setups_by_default_each_a_process_of_its_own():
    found = plan(*APP, *UNIX, *FCGI_TCP)
    assert found["setups"] == ["app", "nginx-app", "nginx-app-unix", "nginx-app-fcgi-tcp"]
    assert all(baseline_of(s) == "app" for s in found["setups"])
    assert found["needed_ports"]["app-fcgi"] == 9002 and found["urls"]["nginx-app-unix"].endswith(":8090/")
    lines = plan_lines(found)
    assert "app_processes app app-unix app-fcgi" in lines
    assert {
        "app_endpoint.app port",
        "app_endpoint.app-unix socket",
        "app_socket.app-unix app-http.sock",
        "app_endpoint.app-fcgi port",
        "app_option.app-fcgi --app-fcgi",
        "needs.nginx-app-fcgi-tcp nginx app-fcgi",
        "app-unix_setups nginx-app-unix",
    } <= set(lines)
    assert not any(line.startswith("app_socket.app-fcgi") for line in lines)  # {port}: no socket


def test_app_fcgi_with_a_socket_is_nginx_app_fcgi_unix_and_binds_no_fcgi_port():
    found = plan(*APP, *FCGI_UNIX)
    assert found["setups"] == ["app", "nginx-app", "nginx-app-fcgi-unix"]
    assert "app-fcgi" not in found["needed_ports"] and "app_socket.app-fcgi app-fcgi.sock" in plan_lines(found)


def test_setups_choose_among_the_app_setups_and_only_the_processes_they_need_are_started():
    found = plan(*APP, *UNIX, *FCGI_UNIX, "--setups", "nginx-app-unix")
    assert found["setups"] == ["app", "nginx-app-unix"]
    assert "app_processes app app-unix" in plan_lines(found)  # app: the baseline; app-fcgi: no chosen setup needs it


def test_the_manifest_records_the_commands_secrets_redacted():
    from wrkreport.bench.app_options import app_parameters

    found = plan(*APP, "--app-unix", "app --unix {socket} --key K1", *FCGI_TCP, "--app-header", "Authorization: K1")
    recorded = app_parameters(found)["app"]
    assert recorded["unix_command"] == "app --unix {socket} --key <redacted>" and recorded["fcgi_command"] == "python3 app.py --fcgi {port}"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--setups", "app"], "give its command line with --app"),
        (UNIX, "--app-unix starts your app beside --app 'CMD' ({port}), which is not given"),
        (FCGI_TCP, "--app-fcgi starts your app beside --app 'CMD'"),
        ([*APP, "--app-unix", "python3 app.py --unix /tmp/a.sock"], "no {socket} in it"),
        ([*APP, "--app-unix", "python3 app.py {port}"], "no {socket} in it"),
        ([*APP, "--app-fcgi", "php-fpm"], "no {port} or {socket} in it"),
        ([*APP, "--app-fcgi", "x {port} {socket}"], "{port} and {socket} both in it"),
        ([*APP, "--app-unix", " "], "--app-unix is empty"),
        ([*APP, "--setups", "nginx-app-unix"], "setup nginx-app-unix serves your app started by --app-unix"),
        ([*APP, *FCGI_TCP, "--setups", "nginx-app-fcgi-unix"], "setup nginx-app-fcgi-unix serves your app started by --app-fcgi"),
        (["--app", "python3 app.py 8000"], "no {port} in it"),
        (["--app", "  "], "is empty"),
        ([*APP, "--app-path", "data.json"], "expected an absolute path"),
        ([*APP, "--app-header", "no colon"], "expected 'Name: value'"),
        (["--app-path", "/x"], "--app 'CMD', which is not given"),
        ([*APP, "--load-generator", "ab"], "does not take it yet"),
        ([*APP, "--app-b", "python3 app.py 8000"], "--app-b 'python3 app.py 8000': no {port} in it"),
        ([*APP, "--app-b", " "], "--app-b is empty"),
        ([*APP, "--app-b", "b {port}", "--app-b-name", "B-2"], "--app-b-name 'B-2': expected a short lowercase word"),
        ([*APP, "--app-b-name", "new"], "--app-b 'CMD', which is not given"),
        (["--app-b", "b {port}"], "--app 'CMD', which is not given"),
        ([*APP, "--app-b", "b {port}", "--variant", "v:no-upstream-keepalive"], "--app-b and --variant do not go together"),
        ([*APP, "--app-b", "b {port}", "--setups", "go-http"], "--app-b: the run has no app setup"),
        (
            ["--app", "./app -listen 127.0.0.1:{port}", "--server-host", "bench@t", "--server-address", "10.0.0.2"],
            "write {host} for the address to listen on",
        ),
        (["--app", "./app -listen localhost:{port}", "--server-host", "t", "--server-address", "10.0.0.2"], "not its loopback"),
        ([*APP, "--app-b", "b {port}", "--server-host", "t", "--server-address", "10.0.0.2"], "--app-b runs on this machine only"),
    ],
)
def test_bad_app_options_are_usage_errors(argv, message):
    with pytest.raises(UsageError, match=None) as caught:
        plan(*argv)
    assert message in str(caught.value)


def test_a_refused_secret_header_is_not_echoed():
    with pytest.raises(UsageError) as caught:
        plan(*APP, "--app-header", "Authorization Bearer K1")  # no colon: shown as given, not a secret by its name
    assert "expected 'Name: value'" in str(caught.value)


def test_the_app_commands_may_come_from_the_environment_and_options_win():
    env = {"BENCH_APP": "a {port}", "BENCH_APP_UNIX": "b {socket}", "BENCH_APP_FCGI": "c {socket}"}
    assert plan(env=env)["setups"] == ["app", "nginx-app", "nginx-app-unix", "nginx-app-fcgi-unix"]
    assert plan("--app-fcgi", "d {port}", env=env)["setups"][-1] == "nginx-app-fcgi-tcp"


def test_app_b_makes_the_app_setups_twins_beside_their_originals_on_the_offset_ports():
    found = plan(*APP, "--app-path", "/d.json", "--app-b", "python3 app.py {port} --items 5", "--app-b-name", "new")
    assert found["setups"] == ["app", "app~new", "nginx-app", "nginx-app~new"]
    assert found["ports"]["app~new"] == 8188 and found["ports"]["nginx-app~new"] == 8189
    assert found["urls"]["app~new"].endswith(":8188/d.json") and found["variant"]["app_b"] is True
    lines = plan_lines(found)
    # the B build serves app~new and, through the variant's nginx (the run's own settings), nginx-app~new; A serves the originals
    assert "needs.app~new appb" in lines and "needs.nginx-app~new vnginx appb" in lines and "needs.nginx-app nginx app" in lines
    assert "appb_setups app~new nginx-app~new" in lines and "app_setups app nginx-app" in lines and "vnginx_setups nginx-app~new" in lines
    assert "app_b_command python3 app.py {port} --items 5" in lines and "app_b_name new" in lines
    assert baseline_of("app~new") == "app"


def test_app_b_from_the_environment_with_its_default_name():
    found = plan(*APP, env={"BENCH_APP_B": "b {port}"})
    assert found["setups"] == ["app", "app~b", "nginx-app", "nginx-app~b"] and found["app"]["b"] == {"command": "b {port}", "name": "b"}


def test_app_with_variant_twins_nginx_app_in_front_of_the_same_app():
    found = plan(*APP, "--variant", "v:no-upstream-keepalive")
    assert found["setups"] == ["app", "nginx-app", "nginx-app~v"]
    assert "needs.nginx-app~v vnginx app" in plan_lines(found)


@pytest.mark.parametrize(
    "extra, said",
    [
        (["--app-b", "b {port}"], "--app-unix does not go together with --app-b yet"),
        (["--variant", "v:no-upstream-keepalive"], "--app-unix does not go together with --variant yet"),
    ],
)
def test_app_unix_and_app_fcgi_are_refused_with_twins(extra, said):
    with pytest.raises(UsageError) as caught:
        plan(*APP, *UNIX, *extra)
    assert said in str(caught.value)


def test_host_is_the_address_the_clients_reach_here_or_on_the_server_host():
    assert "app_host 127.0.0.1" in plan_lines(plan("--app", "./app -listen {host}:{port}"))
    remote = plan(
        "--app", "./app -listen {host}:{port}", "--server-host", "bench@t", "--server-address", "10.0.0.2", "--client-hosts", "c1,c2"
    )
    assert "app_host 10.0.0.2" in plan_lines(remote) and remote["urls"]["app"] == "http://10.0.0.2:8088/"
    assert "app_host 127.0.0.1" in plan_lines(plan("--app", "./app -listen 127.0.0.1:{port}"))  # the loopback is right here


def test_app_unix_and_app_fcgi_are_refused_with_server_host():
    with pytest.raises(UsageError) as caught:
        plan(*APP, *UNIX, "--server-host", "bench@t", "--server-address", "10.0.0.2", "--client-hosts", "c1")
    assert "--app-unix runs on this machine only" in str(caught.value)
