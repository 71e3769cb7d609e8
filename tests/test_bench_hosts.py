"""Tests of wrkreport.bench.hosts: --server-host, --server-address, --client-hosts, --ssh-config are validated before anything starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from wrkreport.bench.hosts import LOCAL, client_hosts, server_address, ssh_target
from wrkreport.bench.parameters import build_plan, plan_lines
from wrkreport.core.errors import UsageError

ROOT = Path(__file__).resolve().parent.parent


def plan(*argv, env=None):
    return build_plan(["--quick", *argv], env or {}, ROOT, nproc=2, euid=0)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("root@10.0.0.2", "root@10.0.0.2"),
        ("bench-box", "bench-box"),
        ("alice@bench.example.org", "alice@bench.example.org"),
        ("root@::1", "root@::1"),
        ("root@0010.0.0.2", None),
        ("-oProxyCommand=touch /tmp/x", None),
        ("root;rm@host", None),
        ("root@host;rm", None),
        ("root@-host", None),
        ("root@host name", None),
        ("root@", None),
    ],
)
def test_ssh_target_takes_names_ssh_reads_verbatim(text, expected):
    if expected is None:
        with pytest.raises(UsageError, match="--server-host"):
            ssh_target(text, "--server-host")
    else:
        assert ssh_target(text, "--server-host") == expected


@pytest.mark.parametrize("text", ["0.0.0.0", "::", "224.0.0.1"])
def test_server_address_is_never_every_interface(text):
    with pytest.raises(UsageError, match="one address of the target"):
        server_address(text, "--server-address")


def test_client_hosts_local_and_remote_distinct():
    assert client_hosts("local, root@c1,c2", "--client-hosts") == [LOCAL, "root@c1", "c2"]
    with pytest.raises(UsageError, match="named twice"):
        client_hosts("c1,c1", "--client-hosts")
    with pytest.raises(UsageError, match="at least one"):
        client_hosts(" , ", "--client-hosts")


def test_plan_lines_and_urls_name_the_target():
    p = plan("--server-host", "root@10.9.0.2", "--server-address", "10.9.0.2", "--client-hosts", "local,root@10.9.0.3")
    lines = plan_lines(p)
    assert "remote 1" in lines
    assert "server_host root@10.9.0.2" in lines
    assert "client_hosts local root@10.9.0.3" in lines
    assert p["urls"]["go-http"] == "http://10.9.0.2:8080/"
    assert "remote 0" in plan_lines(plan())
    assert plan()["urls"]["go-http"] == "http://127.0.0.1:8080/"


def test_environment_sets_hosts_and_option_wins():
    p = plan("--server-host", "root@a", env={"BENCH_SERVER_HOST": "root@b", "BENCH_CLIENT_HOSTS": "local"})
    assert p["server_host"] == "root@a"
    assert p["client_hosts"] == [LOCAL]


@pytest.mark.parametrize(
    "argv, message",
    [
        (("--server-address", "10.0.0.2"), "needs --server-host"),
        (("--client-hosts", "root@c1"), "need --server-host"),
        (("--server-host", "t", "--client-hosts", "c1,c2", "--load-generator", "ab"), "no latency histogram"),
        (("--server-host", "t", "--client-hosts", "c1", "--load-generator", "ab"), "ab runs on this machine only"),
        (("--server-host", "t", "--pin-server", "0"), "--pin-server"),
        (("--server-host", "t", "--client-hosts", "c1", "--pin-client", "0"), "--pin-client"),
        (("--server-host", "t", "--ssh-config", "/nonexistent/ssh_config"), "not a readable file"),
    ],
)
def test_contradictions_are_usage_errors(argv, message):
    with pytest.raises(UsageError, match=message):
        plan(*argv)


def test_ssh_config_is_absolute(tmp_path, monkeypatch):
    (tmp_path / "cfg").write_text("Host *\n")
    monkeypatch.chdir(tmp_path)
    assert plan("--server-host", "t", "--ssh-config", "cfg")["ssh_config"] == str(tmp_path / "cfg")


def test_a_level_is_split_over_the_clients_and_each_share_needs_a_connection_per_thread():
    from wrkreport.bench.remote_clients.measuring import connection_share

    assert [connection_share(100, i, 3) for i in range(3)] == [34, 33, 33]
    assert sum(connection_share(7, i, 4) for i in range(4)) == 7
    with pytest.raises(UsageError, match="split over the 2 clients"):
        plan("--server-host", "t", "--client-hosts", "c1,c2", "--threads", "2", "--connections", "3")
    assert plan("--server-host", "t", "--client-hosts", "c1,c2", "--threads", "2", "--connections", "4")["client_hosts"] == ["c1", "c2"]
