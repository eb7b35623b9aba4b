"""The desk checks for a display and Qt's system libraries before any work, and says what
to install; no Qt abort (SIGABRT) reaches the user."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from proctor.gui.shell import preflight

LDD_SAMPLE = textwrap.dedent("""\
    linux-vdso.so.1 (0x00007ffd)
    libQt6XcbQpa.so.6 => /x/Qt/lib/libQt6XcbQpa.so.6 (0x00007f)
    libxcb-cursor.so.0 => not found
    libxcb-icccm.so.4 => not found
    libxcb-keysyms.so.1 => not found
    libxcb-icccm.so.4 => not found
    libweird.so.9 => not found
""")


def bare_env() -> dict[str, str]:
    return {
        k: v
        for k, v in os.environ.items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    }


def test_every_missing_library_is_named_once_with_the_install_command() -> None:
    missing = preflight.parse_ldd(LDD_SAMPLE)
    assert missing == (
        "libxcb-cursor.so.0",
        "libxcb-icccm.so.4",
        "libxcb-keysyms.so.1",
        "libweird.so.9",
    )
    assert (
        preflight.install_command(missing, "apt-get")
        == "sudo apt-get install -y libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1"
    )
    assert (
        preflight.install_command(missing, "dnf")
        == "sudo dnf install -y xcb-util-cursor xcb-util-wm xcb-util-keysyms"
    )
    assert (
        preflight.install_command(missing, "pacman")
        == "sudo pacman -S --needed xcb-util-cursor xcb-util-wm xcb-util-keysyms"
    )
    text = preflight.report(preflight.Problem(platform="xcb", missing=missing), "apt-get")
    assert "libxcb-icccm.so.4" in text and "libweird.so.9" in text
    assert "sudo apt-get install -y libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1" in text


def test_which_platform_and_display_are_needed() -> None:
    assert preflight.problem({"QT_QPA_PLATFORM": "offscreen"}) is None
    assert preflight.problem({}) == preflight.Problem(no_display=True, platform="xcb")
    assert preflight.problem({"QT_QPA_PLATFORM": "wayland"}).no_display
    assert preflight.platform_name({"WAYLAND_DISPLAY": "wayland-0"}) == "wayland"
    assert preflight.platform_name({"DISPLAY": ":0", "WAYLAND_DISPLAY": "w"}) == "xcb"


def test_the_real_plugin_is_checked_with_ldd() -> None:
    plugin = preflight.plugin_path("xcb")
    assert plugin is not None and plugin.name == "libqxcb.so"
    out = subprocess.run(["ldd", str(plugin)], capture_output=True, text=True).stdout
    assert preflight.missing_libraries(plugin) == preflight.parse_ldd(out)


def test_demo_without_a_display_says_so_and_builds_nothing(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "proctor", "demo", "--dir", str(tmp_path)],
        env=bare_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == preflight.EXIT_NO_DESK, proc.stderr
    assert "needs a graphical display" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert list(tmp_path.iterdir()) == []  # checked before any work


def test_open_and_desk_without_a_display_exit_with_the_documented_code(tmp_path: Path) -> None:
    journal = tmp_path / "j.db"
    journal.write_bytes(b"")
    for argv in (
        [sys.executable, "-m", "proctor", "open", str(journal)],
        [sys.executable, "-m", "proctor.gui", str(journal)],
    ):
        proc = subprocess.run(argv, env=bare_env(), capture_output=True, text=True, timeout=120)
        assert proc.returncode == preflight.EXIT_NO_DESK, (argv, proc.stderr)
        assert "Traceback" not in proc.stderr


DESK_SCRIPT = """
import sys
from proctor.core import Actor, Journal
from proctor.gui.shell import app as desk_app
Journal.open(sys.argv[1], actor=Actor.agent("a")).close()
def shown(window):
    print("shown", flush=True)
sys.exit(desk_app.run_desk(sys.argv[1], operator="alice", on_window=shown,
                           single_instance=False))
"""


def test_ctrl_c_in_the_terminal_closes_the_desk_cleanly(tmp_path: Path) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PROCTOR_LOG_DIR=str(tmp_path / "log"))
    proc = subprocess.Popen(
        [sys.executable, "-c", DESK_SCRIPT, str(tmp_path / "j.db")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout.readline().strip() == "shown"
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "KeyboardInterrupt" not in err and "Traceback" not in err
