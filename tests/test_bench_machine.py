"""Tests of wrkreport.bench.machine: sysctl and --tune on a fake /proc/sys; a directory users cannot traverse."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from wrkreport.bench.machine import ARTICLE_SYSCTL, apply_tune, read_sysctl, sysctl_path, untraversable

# --- sysctl ---------------------------------------------------------------------------------


def fake_proc_sys(tmp_path: Path, values: dict[str, str]) -> Path:
    for key, value in values.items():
        path = sysctl_path(key, tmp_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(value + "\n")
    return tmp_path


def test_read_sysctl_normalises_and_reports_absent_keys(tmp_path):
    root = fake_proc_sys(tmp_path, {"net.ipv4.ip_local_port_range": "32768\t60999", "net.core.somaxconn": "4096"})
    values = read_sysctl(root)
    assert list(values) == [key for key, _, _ in ARTICLE_SYSCTL]
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
        said.append((text, sysctl_path("net.core.somaxconn", root).read_text()))

    actions = {a["key"]: a["action"] for a in apply_tune(root, say)}
    assert actions["fs.file-max"] == "keep-higher"
    assert actions["net.core.somaxconn"] == "write"
    assert actions["net.ipv4.ip_forward"] == "skip"
    assert actions["net.ipv4.tcp_tw_reuse"] == "same"
    assert actions["net.ipv4.tcp_tw_recycle"] == "absent"
    assert read_sysctl(root)["net.core.somaxconn"] == "65535"
    assert read_sysctl(root)["net.ipv4.tcp_fin_timeout"] == "30"
    assert read_sysctl(root)["net.ipv4.ip_forward"] == "1"
    assert read_sysctl(root)["fs.file-max"] == "9223372036854775807"
    announce = [s for s in said if s[0] == "sysctl net.core.somaxconn: 4096 -> 65535"]
    assert announce and announce[0][1] == "4096\n"  # printed before the write


def test_tune_hands_over_every_planned_write_before_the_first_write(tmp_path):
    root = fake_proc_sys(tmp_path, {"net.core.somaxconn": "4096", "net.ipv4.tcp_fin_timeout": "60"})
    seen = []

    def before(actions):
        planned = {a["key"]: (a["from"], a["to"], a.get("ok", "-")) for a in actions if a["action"] == "write"}
        seen.append((planned, read_sysctl(root)["net.core.somaxconn"]))

    actions = apply_tune(root, lambda text: None, before)
    assert seen == [
        ({"net.core.somaxconn": ("4096", "65535", None), "net.ipv4.tcp_fin_timeout": ("60", "30", None)}, "4096")
    ]  # planned, nothing written yet
    assert {a["key"]: a["ok"] for a in actions if a["action"] == "write"} == {"net.core.somaxconn": True, "net.ipv4.tcp_fin_timeout": True}


# --- users' reach -----------------------------------------------------------------------------


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
    blocked = untraversable(inner, stranger, {54321})
    assert blocked is not None and blocked.startswith(f"{outer} (mode 0700,")
    os.chmod(outer, 0o711)
    assert untraversable(inner, stranger, {54321}) == f"{inner} (mode 0710, owner {os.getuid()}:{os.getgid()})"
    assert untraversable(inner, stranger, {os.getgid()}) is None  # group member may pass
    assert untraversable(inner, 0, set()) is None
