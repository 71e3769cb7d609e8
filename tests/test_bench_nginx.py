"""Tests of wrkreport.bench.nginx: modules and the rendered configuration."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers import NGINX_TEMPLATE, fake_nginx_V, plan, render_with
from wrkreport.bench.nginx import cap_log, nginx_flags, nginx_missing_modules, nginx_values, render_template, static_body_values
from wrkreport.bench.profiles import body_text
from wrkreport.core.errors import UsageError
from wrkreport.core.setups import H2_SETUP_IDS, SETUP_BY_ID, SETUP_IDS

# --- nginx configuration ----------------------------------------------------------------------

EVERY = [s for s in SETUP_IDS if s not in H2_SETUP_IDS]  # every setup but the h2 ones: those are h2load's, which --app's are not


def render(tmp_path: Path, setups: list[str], user: str | None = "nobody", extra: str = "") -> str:
    app = ["--app", "app --port {port}"] if any(SETUP_BY_ID[s].app for s in setups) else []
    app += ["--app-unix", "app --unix {socket}"] if "nginx-app-unix" in setups else []
    fcgi = "{port}" if "nginx-app-fcgi-tcp" in setups else "{socket}"
    app += ["--app-fcgi", f"app --fcgi {fcgi}"] if any(SETUP_BY_ID[s].app_process == "app-fcgi" for s in setups) else []
    planned = [s for s in setups if s != "nginx-app-fcgi-unix" or fcgi == "{socket}"]  # one --app-fcgi: one of its two setups per run
    manifest = {"nginx_V": fake_nginx_V(tmp_path, extra), "parameters": plan("--setups", ",".join(planned), *app)}
    values = nginx_values(manifest, "/tmp/wrkreport.abc/nginx", "/tmp/wrkreport.abc/go.sock", user, "nogroup", 20000)
    values.setdefault("port_nginx_app_fcgi_unix", str(SETUP_BY_ID["nginx-app-fcgi-unix"].default_port))  # the one not planned
    nginx_setups = [s for s in setups if SETUP_BY_ID[s].server == "nginx"]
    return render_template(NGINX_TEMPLATE.read_text(), nginx_setups, values, nginx_flags(manifest))


def test_rendered_config_has_the_article_settings(tmp_path):
    conf = render(tmp_path, EVERY)
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


def test_rendered_config_of_the_new_nginx_setups(tmp_path):
    conf = render_with(tmp_path, "--setups", "all")
    assert "server unix:/tmp/w/gohttp.sock;" in conf and "proxy_pass http://go_http_unix;" in conf
    assert "listen 127.0.0.1:8084;" in conf and "listen 127.0.0.1:8086;" in conf
    assert "default_type text/plain;" in conf and 'return 200 "Hello World\\n";' in conf
    assert conf.count("keepalive 300;") == 4 and conf.count('proxy_set_header Connection "";') == 2
    assert "8085" not in conf  # go-fasthttp is not behind nginx
    assert "{{" not in conf and "#@" not in conf


def test_rendered_config_of_the_h2_setups(tmp_path):
    conf = render(tmp_path, ["go-http", *H2_SETUP_IDS])
    directives = "\n".join(line.split("#", 1)[0] for line in conf.splitlines())
    # nginx 1.22's syntax: http2 on the listen line, TLS with the run's key and the TLS setups' directives
    assert "listen 127.0.0.1:8447 ssl http2;" in directives and "listen 127.0.0.1:8448 ssl http2;" in directives
    assert directives.count("ssl_certificate /tmp/wrkreport.abc/tls/cert.pem;") == 2
    assert directives.count("ssl_protocols TLSv1.3;") == 2 and directives.count("ssl_session_tickets off;") == 2
    # to Go over HTTP/1.1 with upstream keep-alive: go-http's port, and the Unix socket of nginx-http-unix
    assert "proxy_pass http://go_h2_backend;" in directives and "proxy_pass http://go_h2_unix_backend;" in directives
    assert directives.count("proxy_http_version 1.1;") == 2 and directives.count("keepalive 300;") == 2
    assert "server 127.0.0.1:8080;" in directives and "8443" not in directives and "8446" not in directives  # go-h2 is Go's own
    assert "{{" not in conf and "#@" not in conf


def test_the_h2_setups_need_nginx_http_v2_module(tmp_path):
    without = "nginx version: nginx/1.22.1\nconfigure arguments: --with-http_ssl_module\n"
    assert nginx_missing_modules(without, ["nginx-h2", "nginx-https"]) == [
        "nginx-h2 needs nginx's http_v2 module, which this nginx was built without"
    ]
    assert nginx_missing_modules(without + " --with-http_v2_module", ["nginx-h2", "nginx-h2-unix"]) == []


def test_rendered_config_without_upstream_keepalive(tmp_path):
    conf = render_with(tmp_path, "--setups", "all", "--no-upstream-keepalive")
    directives = "\n".join(line.split("#", 1)[0] for line in conf.splitlines())
    assert "keepalive 300;" not in directives and "keepalive_requests 10000;" in directives  # the client side keeps it
    assert directives.count("keepalive_requests 10000;") == 1
    assert "proxy_http_version" not in directives and "proxy_set_header" not in directives
    assert directives.count("fastcgi_keep_conn off;") == 2 and "fastcgi_keep_conn on;" not in directives


def test_static_body_fits_in_one_token_or_comes_from_maps(tmp_path):
    assert static_body_values(12)["static_return"] == '"Hello World\\n"'
    conf = render_with(tmp_path, "--setups", "nginx-static", "--body-bytes", "4096")
    maps = dict(re.findall(r'map \$server_port \$(static_body_\d+) \{ default "([^"]*)"; \}', conf))
    assert list(maps) == ["static_body_0", "static_body_1", "static_body_2"]
    assert 'return 200 "$static_body_0$static_body_1$static_body_2";' in conf
    body = "".join(maps[name] for name in maps).replace("\\n", "\n")
    assert body == body_text(4096)
    assert max(len(token) for token in conf.split()) < 4096 - 100  # nginx's token limit


def test_rendered_config_keeps_only_the_selected_setups(tmp_path):
    conf = render(tmp_path, ["go-http", "nginx-fcgi-tcp"])
    assert "listen 127.0.0.1:8082;" in conf
    assert "8081" not in conf and "8083" not in conf and "go.sock" not in conf


def test_the_app_setups_proxy_to_its_socket_and_speak_fastcgi_to_its_port_or_socket(tmp_path):
    conf = render(tmp_path, ["app", "nginx-app-unix", "nginx-app-fcgi-tcp", "nginx-app-fcgi-unix"])
    for directive in (
        "server unix:/tmp/wrkreport.abc/app-http.sock;",
        "server 127.0.0.1:9002;",
        "server unix:/tmp/wrkreport.abc/app-fcgi.sock;",
        "listen 127.0.0.1:8090;",
        "listen 127.0.0.1:8091;",
        "listen 127.0.0.1:8092;",
        "proxy_pass http://your_app_unix;",
        "fastcgi_pass your_app_fcgi_tcp;",
        "fastcgi_pass your_app_fcgi_unix;",
        'fastcgi_param SCRIPT_NAME "";',
        "fastcgi_param PATH_INFO $uri;",
        "fastcgi_param REQUEST_URI $request_uri;",
        "fastcgi_param QUERY_STRING $query_string;",
    ):
        assert directive in conf, directive
    assert conf.count("fastcgi_keep_conn on;") == 2 and "include" not in conf  # every param once: no stock file beside them
    params = re.findall(r"fastcgi_param (\S+)", conf)
    assert len(params) == 2 * len(set(params))


def test_rendered_config_without_root_has_no_user_directive(tmp_path):
    conf = render(tmp_path, EVERY, user=None)
    assert not re.search(r"^user ", conf, re.M)


def test_rendered_config_skips_temp_paths_of_missing_modules(tmp_path):
    conf = render(tmp_path, EVERY, extra="--without-http_uwsgi_module --without-http_scgi_module")
    assert "uwsgi_temp_path" not in conf and "scgi_temp_path" not in conf


def test_nginx_without_fastcgi_params_is_refused(tmp_path):
    manifest = {"nginx_V": f"configure arguments: --conf-path={tmp_path}/nope/nginx.conf", "parameters": plan()}
    with pytest.raises(UsageError, match="cannot find nginx's stock fastcgi_params"):
        nginx_values(manifest, "/p", "/s", None, None, 1024)


def test_nginx_values_refuse_unsafe_paths(tmp_path):
    manifest = {"nginx_V": fake_nginx_V(tmp_path), "parameters": plan()}
    with pytest.raises(UsageError, match="cannot be written into the nginx configuration"):
        nginx_values(manifest, "/tmp/a b", "/s", None, None, 1024)


def test_missing_nginx_modules_are_named():
    v = "configure arguments: --without-http_fastcgi_module"
    assert nginx_missing_modules(v, ["go-http", "nginx-http"]) == []
    assert nginx_missing_modules(v, ["nginx-fcgi-unix"]) == [
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
        render_template(template, ["nginx-http"], {}, {"on": True})


def test_template_flags_keep_one_branch():
    template = "a\n    #@if on\nyes\n    #@else\nno\n    #@endif\nb\n#@if on\nonly\n#@endif\n"
    assert render_template(template, [], {}, {"on": True}) == "a\nyes\nb\nonly\n"
    assert render_template(template, [], {}, {"on": False}) == "a\nno\nb\n"


# --- the error log's cap ------------------------------------------------------------------


def test_cap_log_keeps_the_first_lines_and_notes_the_cut_while_a_writer_appends(tmp_path):
    log = tmp_path / "nginx-error.gomaxprocs-1.log"
    line = b"2026/11/23 09:00:00 [crit] 7#7: *1 connect() to unix:/tmp/x/go.sock failed (13: Permission denied)\n"
    writer = open(log, "ab")  # as nginx holds it: O_APPEND
    try:
        writer.write(line * 50)
        writer.flush()
        assert cap_log(log, 10_000) == 0 and log.read_bytes() == line * 50  # under the cap: untouched
        writer.write(line * 500)
        writer.flush()
        dropped = cap_log(log, 10_000)
        text = log.read_bytes()
        kept = 10_000 // len(line)
        assert text.startswith(line * kept) and dropped == 550 * len(line) - kept * len(line)
        assert text.endswith(f"[wrkreport] log capped at 10000 bytes: {dropped} bytes of later lines dropped\n".encode())
        writer.write(line * 500)  # the writer goes on after the cut: its lines land after the note
        writer.flush()
        assert log.stat().st_size > 10_000
        again = cap_log(log, 10_000)
        assert again == dropped + 500 * len(line)  # counted over both cuts
        text = log.read_bytes()
        assert text == line * kept + f"[wrkreport] log capped at 10000 bytes: {again} bytes of later lines dropped\n".encode()
    finally:
        writer.close()
    assert cap_log(tmp_path / "absent.log") == 0
