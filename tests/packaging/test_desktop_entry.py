"""`proctor install-desktop`: the menu entry and icons land in $XDG_DATA_HOME, start this
installation's launcher, validate, and --uninstall removes exactly them. (Fast: runs in
the main test run.)"""

from __future__ import annotations

import configparser
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from proctor import cli, cmd_desktop, resources

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="freedesktop.org menus (Linux, BSD)"
)


def entry_of(path: Path) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # keys are case-sensitive
    parser.read(path, encoding="utf-8")
    return parser["Desktop Entry"]


def test_the_shipped_entry_names_the_app_and_its_icon():
    entry = entry_of(resources.path("linux", f"{resources.APP_ID}.desktop"))
    assert entry["Type"] == "Application" and entry["Name"] == "Proctor"
    assert entry["Icon"] == resources.APP_ID and entry["Terminal"] == "false"
    # %u: a journal file (a path or a file: URL) or a proctor:// link the desktop hands over
    assert entry["Exec"] == "proctor-desk %u"
    assert "x-scheme-handler/proctor" in entry["MimeType"].split(";")
    if shutil.which("desktop-file-validate"):
        shipped = resources.path("linux", f"{resources.APP_ID}.desktop")
        subprocess.run(["desktop-file-validate", str(shipped)], check=True)


def test_install_and_uninstall(tmp_path, capsys):
    launcher = tmp_path / "my apps" / "proctor-desk"  # a space: Exec must quote it
    launcher.parent.mkdir()
    launcher.write_text("#!/bin/sh\n")
    launcher.chmod(0o755)
    data = tmp_path / "share"
    assert (
        cli.main(["install-desktop", "--data-dir", str(data), "--executable", str(launcher)]) == 0
    )
    desktop = data / "applications" / f"{resources.APP_ID}.desktop"
    entry = entry_of(desktop)
    assert entry["Exec"] == f'"{launcher}" %u'
    assert "x-scheme-handler/proctor" in entry["MimeType"].split(";")
    assert entry["TryExec"] == str(launcher)
    for size in resources.APP_ICON_SIZES:
        icon = data / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{resources.APP_ID}.png"
        assert icon.read_bytes() == resources.read_bytes("icons", "app", f"proctor-{size}.png")
    if shutil.which("desktop-file-validate"):
        subprocess.run(["desktop-file-validate", str(desktop)], check=True)
    assert "application menu" in capsys.readouterr().out
    assert cli.main(["install-desktop", "--data-dir", str(data), "--uninstall"]) == 0
    left = [p for p in data.rglob("*") if p.is_file() and p.suffix in (".desktop", ".png", ".svg")]
    assert left == []


def test_a_missing_launcher_is_refused_with_a_hint(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cmd_desktop, "desk_executable", lambda: None)
    assert cli.main(["install-desktop", "--data-dir", str(tmp_path)]) == cmd_desktop.EXIT_NOT_FOUND
    assert "hint: pass --executable" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("path", "quoted"),
    [
        ("/opt/proctor/proctor-desk", "/opt/proctor/proctor-desk"),
        ("/home/a b/proctor-desk", '"/home/a b/proctor-desk"'),
        ('/tmp/we"ird$/x', '"/tmp/we\\\\"ird\\\\$/x"'),
    ],
)
def test_exec_paths_are_quoted_per_the_desktop_entry_spec(path, quoted):
    assert cmd_desktop.exec_quote(Path(path)) == quoted


def test_the_dev_checkout_finds_its_own_launcher():
    found = cmd_desktop.desk_executable()
    assert found is not None and found.name.startswith("proctor-desk")
