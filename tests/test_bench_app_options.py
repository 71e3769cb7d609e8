"""Tests of wrkreport.bench.app_options: --app in the plan, which headers are secret, and how they are redacted."""

from __future__ import annotations

import pytest

from wrkreport.bench.app_options import bash_quoted, is_secret, redact, redact_argv, redacted_command_line, shown_header
from wrkreport.bench.parameters import plan_lines
from wrkreport.core.errors import UsageError
from wrkreport.core.setups import baseline_of

from helpers import plan

APP = ["--app", "python3 app.py {port}"]


@pytest.mark.parametrize("name", ["Authorization", "authorization", "Proxy-Authorization", "Cookie", "X-API-Key", "X-Auth-Token", "Client-Secret",
                                  "X-Password", "Set-Cookie", "X-Session-Id"])
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
    assert redact_argv(["wrk", "-H", "Authorization: Bearer x", "-H", "Host: h"]) == ["wrk", "-H", "Authorization: <redacted>", "-H", "Host: h"]


def test_the_plan_of_an_app_run_chooses_its_setups_and_keeps_the_secret_out_of_the_command_line():
    found = plan(*APP, "--app-path", "/api?x=1", "--app-header", "Authorization: Bearer K1", "--app-header", "Host: example.org")
    assert found["setups"] == ["app", "nginx-app"] and baseline_of("nginx-app") == "app"
    assert found["urls"]["nginx-app"].endswith(":8089/api?x=1") and found["ports"]["app"] == 8088
    lines = plan_lines(found)
    assert "app_header.0 Authorization: Bearer K1" in lines and "app_shown python3 app.py {port}" in lines
    assert redacted_command_line("./run_bench.sh --app-header Authorization:\\ Bearer\\ K1", found) == "./run_bench.sh --app-header Authorization:\\ <redacted>"


def test_setups_may_add_the_go_ones_and_app_comes_with_nginx_app():
    assert plan(*APP, "--setups", "go-http,nginx-app")["setups"] == ["go-http", "app", "nginx-app"]


@pytest.mark.parametrize("argv, message", [
    (["--setups", "app"], "give its command line with --app"),
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
])
def test_bad_app_options_are_usage_errors(argv, message):
    with pytest.raises(UsageError, match=None) as caught:
        plan(*argv)
    assert message in str(caught.value)


def test_a_refused_secret_header_is_not_echoed():
    with pytest.raises(UsageError) as caught:
        plan(*APP, "--app-header", "Authorization Bearer K1")  # no colon: shown as given, not a secret by its name
    assert "expected 'Name: value'" in str(caught.value)


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
