"""`proctor install-desktop`: put Proctor in the desktop's application menu (Linux/BSD).

Writes the desktop entry (resources/linux/<APP_ID>.desktop with Exec pointing at this
installation's ``proctor-desk``) and the app icon in every size into the user's data
folder ($XDG_DATA_HOME, default ~/.local/share), following the freedesktop.org desktop
entry and icon theme specifications. Works the same from a wheel install (venv, pipx,
uv tool) and from the bundle (run the bundle's ``proctor``). ``--uninstall`` removes
exactly those files.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

EXIT_OK, EXIT_UNSUPPORTED, EXIT_NOT_FOUND = 0, 2, 3


def data_home() -> Path:
    value = os.environ.get("XDG_DATA_HOME", "")
    return Path(value) if value else Path.home() / ".local" / "share"


def desk_executable() -> Path | None:
    """This installation's ``proctor-desk``: beside the bundle's executable, else in the
    same bin folder as the running Python (venv, pipx, uv tool), else on PATH."""
    name = "proctor-desk.exe" if sys.platform == "win32" else "proctor-desk"
    here = Path(sys.executable).parent
    for candidate in (here / name, Path(sys.argv[0]).resolve().parent / name):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate.absolute()
    found = shutil.which("proctor-desk")
    return Path(found).absolute() if found else None


def exec_quote(path: Path) -> str:
    """``path`` as one argument of a desktop entry's Exec key (quoted when needed)."""
    text = str(path)
    if not any(c in text for c in " \t\n\"'\\><~|&;$*?#()`="):
        return text
    escaped = "".join("\\" + c if c in '"`$\\' else c for c in text)
    # The Exec value is itself a string value, whose backslashes are escaped once more.
    return '"' + escaped.replace("\\", "\\\\") + '"'


def desktop_entry(executable: Path) -> str:
    from proctor import resources

    lines = []
    for line in resources.read_text("linux", f"{resources.APP_ID}.desktop").splitlines():
        if line.startswith("Exec="):
            line = f"Exec={exec_quote(executable)} %u"
        elif line.startswith("TryExec="):
            line = f"TryExec={executable}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def planned_files(data: Path) -> dict[Path, tuple[str, ...]]:
    """Installed file -> the resource it comes from (empty for the desktop entry)."""
    from proctor import resources

    app_id = resources.APP_ID
    files: dict[Path, tuple[str, ...]] = {data / "applications" / f"{app_id}.desktop": ()}
    for size in resources.APP_ICON_SIZES:
        target = data / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{app_id}.png"
        files[target] = ("icons", "app", f"proctor-{size}.png")
    files[data / "icons" / "hicolor" / "scalable" / "apps" / f"{app_id}.svg"] = (
        "icons",
        "proctor.svg",
    )
    return files


def install(data: Path, executable: Path) -> list[Path]:
    from proctor import resources

    written = []
    for target, source in planned_files(data).items():
        target.parent.mkdir(parents=True, exist_ok=True)
        if source:
            target.write_bytes(resources.read_bytes(*source))
        else:
            target.write_text(desktop_entry(executable), encoding="utf-8")
        written.append(target)
    refresh_caches(data)
    return written


def uninstall(data: Path) -> list[Path]:
    removed = []
    for target in planned_files(data):
        if target.exists():
            target.unlink()
            removed.append(target)
    refresh_caches(data)
    return removed


def refresh_caches(data: Path) -> None:
    """Tell the menu and the icon theme (best effort: the tools may not be installed)."""
    commands = [
        ["update-desktop-database", "-q", str(data / "applications")],
        ["gtk-update-icon-cache", "-q", "-t", "-f", str(data / "icons" / "hicolor")],
    ]
    for command in commands:
        if shutil.which(command[0]):
            subprocess.run(command, check=False, capture_output=True, timeout=60)


def cmd_install_desktop(args: argparse.Namespace) -> int:
    if sys.platform in ("win32", "darwin"):
        print(
            "proctor install-desktop: this is for Linux and BSD desktops; on Windows and "
            "macOS use the bundle (see the README's Install section)",
            file=sys.stderr,
        )
        return EXIT_UNSUPPORTED
    data = args.data_dir or data_home()
    if args.uninstall:
        for path in uninstall(data):
            print(f"removed {path}")
        return EXIT_OK
    executable = args.executable or desk_executable()
    if executable is None or not executable.is_file():
        print(
            "proctor install-desktop: cannot find the proctor-desk launcher of this installation",
            file=sys.stderr,
        )
        print("  hint: pass --executable PATH", file=sys.stderr)
        return EXIT_NOT_FOUND
    for path in install(data, executable.absolute()):
        print(f"wrote {path}")
    print(f"Proctor is in your application menu (it starts {executable}).")
    return EXIT_OK


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "install-desktop",
        help="add Proctor to the desktop's application menu (Linux)",
        description="Install the desktop entry and icons for this installation's "
        "proctor-desk into $XDG_DATA_HOME (default ~/.local/share), so Proctor "
        "shows in the application menu. --uninstall removes them again.",
    )
    p.add_argument("--uninstall", action="store_true", help="remove the entry and icons")
    p.add_argument(
        "--data-dir", type=Path, help="install under this folder instead of $XDG_DATA_HOME"
    )
    p.add_argument(
        "--executable",
        type=Path,
        help="the launcher the entry starts (default: this installation's proctor-desk)",
    )
    p.set_defaults(func=cmd_install_desktop)
