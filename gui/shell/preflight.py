"""Can the desk start here? Checked before any work and before Qt is loaded.

Qt aborts the process (SIGABRT, exit 134) when it has no display or when its platform
plugin cannot load a system library, and says only "xcb-cursor0 or libxcb-cursor0 is
needed" for the first missing library. ``problem()`` finds every missing one at once
(``ldd`` on the platform plugin) and ``report()`` says in one paragraph what to install
with the platform's package manager. This module imports no Qt: it must run where Qt
cannot.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

EXIT_NO_DESK = 4  # documented in the README: the desk cannot start on this machine

# Platforms that need no display server (set by tests, CI and headless smoke runs).
HEADLESS = {"offscreen", "minimal", "vnc", "linuxfb", "eglfs", "vkkhrdisplay"}

# soname -> (apt, dnf, pacman) package names. Qt's xcb and wayland plugins' usual gaps.
PACKAGES: dict[str, tuple[str, str, str]] = {
    "libxcb-cursor.so.0": ("libxcb-cursor0", "xcb-util-cursor", "xcb-util-cursor"),
    "libxcb-icccm.so.4": ("libxcb-icccm4", "xcb-util-wm", "xcb-util-wm"),
    "libxcb-keysyms.so.1": ("libxcb-keysyms1", "xcb-util-keysyms", "xcb-util-keysyms"),
    "libxcb-image.so.0": ("libxcb-image0", "xcb-util-image", "xcb-util-image"),
    "libxcb-render-util.so.0": (
        "libxcb-render-util0",
        "xcb-util-renderutil",
        "xcb-util-renderutil",
    ),
    "libxcb-randr.so.0": ("libxcb-randr0", "libxcb", "libxcb"),
    "libxcb-shape.so.0": ("libxcb-shape0", "libxcb", "libxcb"),
    "libxcb-xfixes.so.0": ("libxcb-xfixes0", "libxcb", "libxcb"),
    "libxcb-xkb.so.1": ("libxcb-xkb1", "libxcb", "libxcb"),
    "libxcb-sync.so.1": ("libxcb-sync1", "libxcb", "libxcb"),
    "libxcb-shm.so.0": ("libxcb-shm0", "libxcb", "libxcb"),
    "libxcb-render.so.0": ("libxcb-render0", "libxcb", "libxcb"),
    "libxcb.so.1": ("libxcb1", "libxcb", "libxcb"),
    "libX11-xcb.so.1": ("libx11-xcb1", "libX11-xcb", "libx11"),
    "libX11.so.6": ("libx11-6", "libX11", "libx11"),
    "libxkbcommon-x11.so.0": ("libxkbcommon-x11-0", "libxkbcommon-x11", "libxkbcommon-x11"),
    "libxkbcommon.so.0": ("libxkbcommon0", "libxkbcommon", "libxkbcommon"),
    "libEGL.so.1": ("libegl1", "libglvnd-egl", "libglvnd"),
    "libGL.so.1": ("libgl1", "libglvnd-glx", "libglvnd"),
    "libOpenGL.so.0": ("libopengl0", "libglvnd-opengl", "libglvnd"),
    "libfontconfig.so.1": ("libfontconfig1", "fontconfig", "fontconfig"),
    "libfreetype.so.6": ("libfreetype6", "freetype", "freetype2"),
    "libdbus-1.so.3": ("libdbus-1-3", "dbus-libs", "dbus"),
    "libwayland-client.so.0": ("libwayland-client0", "libwayland-client", "wayland"),
    "libwayland-cursor.so.0": ("libwayland-cursor0", "libwayland-cursor", "wayland"),
    "libwayland-egl.so.1": ("libwayland-egl1", "libwayland-egl", "wayland"),
}
MANAGERS = (
    ("apt-get", "sudo apt-get install -y"),
    ("dnf", "sudo dnf install -y"),
    ("pacman", "sudo pacman -S --needed"),
)


@dataclass(frozen=True)
class Problem:
    """Why the desk cannot start: no display, or these libraries are missing."""

    no_display: bool = False
    platform: str = ""
    missing: tuple[str, ...] = ()


def platform_name(env: dict[str, str]) -> str:
    """The Qt platform plugin this environment selects (Linux; "" elsewhere)."""
    chosen = env.get("QT_QPA_PLATFORM", "").split(":", 1)[0].strip()
    if chosen:
        return chosen
    if env.get("WAYLAND_DISPLAY") and not env.get("DISPLAY"):
        return "wayland"
    return "xcb"


def problem(env: dict[str, str] | None = None) -> Problem | None:
    """None when the desk can start; else what stops it. Linux only (elsewhere Qt's own
    platform plugins ship their libraries)."""
    env = dict(os.environ if env is None else env)
    if not sys.platform.startswith("linux"):
        return None
    name = platform_name(env)
    if name in HEADLESS:
        return None
    if name == "xcb" and not env.get("DISPLAY"):
        return Problem(no_display=True, platform=name)
    if name.startswith("wayland") and not env.get("WAYLAND_DISPLAY"):
        return Problem(no_display=True, platform=name)
    missing = missing_libraries(plugin_path(name))
    return Problem(platform=name, missing=missing) if missing else None


def plugin_path(name: str) -> Path | None:
    """PySide6's platform plugin file for ``name``, found without importing Qt."""
    import importlib.util

    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    base = Path(next(iter(spec.submodule_search_locations))) / "Qt" / "plugins" / "platforms"
    plugin = "wayland" if name.startswith("wayland") else name
    candidate = base / f"libq{plugin}.so"
    return candidate if candidate.is_file() else None


def missing_libraries(plugin: Path | None) -> tuple[str, ...]:
    """Libraries ``ldd`` reports as not found for ``plugin`` (every one, in order)."""
    ldd = shutil.which("ldd")
    if plugin is None or ldd is None:
        return ()
    try:
        out = subprocess.run(
            [ldd, str(plugin)], capture_output=True, text=True, timeout=20, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return ()
    return parse_ldd(out)


def parse_ldd(output: str) -> tuple[str, ...]:
    found: list[str] = []
    for line in output.splitlines():
        if "not found" in line:
            name = line.split("=>", 1)[0].strip()
            if name and name not in found:
                found.append(name)
    return tuple(found)


def install_command(missing: tuple[str, ...], manager: str | None = None) -> str | None:
    """The one command that installs ``missing`` with this machine's package manager."""
    managers = (
        [m for m in MANAGERS if m[0] == manager]
        if manager
        else [m for m in MANAGERS if shutil.which(m[0])] or [MANAGERS[0]]
    )
    if not managers or not missing:
        return None
    tool, command = managers[0]
    column = [m[0] for m in MANAGERS].index(tool)
    names: list[str] = []
    for soname in missing:
        package = PACKAGES.get(soname, (None, None, None))[column]
        if package and package not in names:
            names.append(package)
    return f"{command} {' '.join(names)}" if names else None


def report(found: Problem, manager: str | None = None) -> str:
    """One paragraph: what is missing and the exact command that fixes it."""
    if found.no_display:
        return (
            "The Proctor desk needs a graphical display, and this session has none "
            "(DISPLAY and WAYLAND_DISPLAY are unset). Run it from a desktop session, "
            "over `ssh -X`, or under a virtual display (`xvfb-run proctor demo`). "
            "The command-line tools (`proctor inbox`, `proctor approve`, …) work "
            "without one."
        )
    text = (
        f"The Proctor desk cannot start: Qt's `{found.platform}` display plugin needs "
        f"system libraries that are missing here: {', '.join(found.missing)}."
    )
    command = install_command(found.missing, manager)
    if command:
        text += f" Install them with: {command}"
    unknown = [s for s in found.missing if s not in PACKAGES]
    if unknown:
        text += (
            f" (find the package providing {', '.join(unknown)} with your package "
            "manager's file search)"
        )
    return text + " — then start the desk again."


def check_or_explain(program: str) -> int | None:
    """None when the desk can start; else print the report to stderr and return the exit
    code (``EXIT_NO_DESK``)."""
    found = problem()
    if found is None:
        return None
    print(f"{program}: {report(found)}", file=sys.stderr)
    return EXIT_NO_DESK
