#!/usr/bin/env bash
# Build Proctor's desktop bundle: a one-folder PyInstaller app with two executables
# (`proctor` and `proctor-desk`), the desktop entry, icons and AppStream metadata.
#
#   packaging/build.sh                  # -> build/bundle/dist/proctor/ (+ a .tar.gz on Linux)
#   PROCTOR_BUILD_DIR=/tmp/b packaging/build.sh
#   PROCTOR_BUILD_EXTRAS=pillow packaging/build.sh   # Windows/macOS: PNG icon -> .ico/.icns
#
# Steps: (1) build the sdist and, from it, the wheel; (2) a fresh venv holding only the
# wheel, its runtime dependencies pinned by uv.lock, and PyInstaller (a clean venv keeps
# test and dev packages out of the bundle, and no system-wide PySide6 can sneak in);
# (3) PyInstaller with packaging/proctor.spec; (4) on Linux, share/ with the desktop
# entry, icons and metainfo, and a tarball. Needs uv; prints the bundle's size and the
# build time at the end.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${PROCTOR_BUILD_DIR:-$ROOT/build/bundle}"
PYINSTALLER_SPEC="${PROCTOR_PYINSTALLER:-pyinstaller>=6.10,<7}"
APP_ID="dev.proctor.Desk"
started=$(date +%s)

if [ -z "${PYTHON:-}" ]; then
  if [ -x "$ROOT/.venv/bin/python" ]; then PYTHON="$ROOT/.venv/bin/python"; else PYTHON=3.11; fi
fi

rm -rf "$OUT"
mkdir -p "$OUT"
cd "$ROOT"
VERSION="$(sed -n 's/^__version__ = "\(.*\)"/\1/p' cli/__init__.py)"

echo "== 1/4 sdist and wheel (proctor $VERSION)"
uv build --quiet --out-dir "$OUT/wheel" "$ROOT"
WHEEL="$(ls "$OUT"/wheel/proctor-*.whl)"

echo "== 2/4 clean build venv"
uv export --quiet --frozen --no-dev --no-hashes --no-emit-project --format requirements-txt \
  > "$OUT/constraints.txt"
uv venv --quiet --python "$PYTHON" "$OUT/venv"
if [ -x "$OUT/venv/Scripts/python.exe" ]; then VENV_PY="$OUT/venv/Scripts/python.exe"
else VENV_PY="$OUT/venv/bin/python"; fi
# shellcheck disable=SC2086 # PROCTOR_BUILD_EXTRAS is a space-separated list of packages
uv pip install --quiet --python "$VENV_PY" -c "$OUT/constraints.txt" "$WHEEL" "$PYINSTALLER_SPEC" \
  ${PROCTOR_BUILD_EXTRAS:-}

echo "== 3/4 PyInstaller"
"$VENV_PY" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath "$OUT/dist" --workpath "$OUT/work" "$ROOT/packaging/proctor.spec"
BUNDLE="$OUT/dist/proctor"

if [ "$(uname -s)" = "Linux" ]; then
  echo "== 4/4 desktop files and tarball"
  SHARE="$BUNDLE/share"
  mkdir -p "$SHARE/applications" "$SHARE/metainfo"
  sed -e 's|^Exec=.*|Exec=proctor-desk %u|' -e 's|^TryExec=.*|TryExec=proctor-desk|' \
    resources/linux/$APP_ID.desktop > "$SHARE/applications/$APP_ID.desktop"
  for png in resources/icons/app/proctor-*.png; do
    size="$(basename "$png" .png)"; size="${size#proctor-}"
    mkdir -p "$SHARE/icons/hicolor/${size}x${size}/apps"
    cp "$png" "$SHARE/icons/hicolor/${size}x${size}/apps/$APP_ID.png"
  done
  mkdir -p "$SHARE/icons/hicolor/scalable/apps"
  cp resources/icons/proctor.svg "$SHARE/icons/hicolor/scalable/apps/$APP_ID.svg"
  PROJECT_URL="${PROCTOR_PROJECT_URL:-}"
  if [ -z "$PROJECT_URL" ]; then
    remote="$(git -C "$ROOT" remote get-url origin 2>/dev/null || true)"
    case "$remote" in
      git@github.com:*) PROJECT_URL="https://github.com/${remote#git@github.com:}" ;;
      https://*) PROJECT_URL="$remote" ;;
    esac
    PROJECT_URL="${PROJECT_URL%.git}"
  fi
  if [ -n "$PROJECT_URL" ]; then
    sed -e "s|@PROJECT_URL@|$PROJECT_URL|g" -e "s|@VERSION@|$VERSION|g" \
        -e "s|@DATE@|$(date -u +%Y-%m-%d)|g" \
        packaging/linux/$APP_ID.metainfo.xml.in > "$SHARE/metainfo/$APP_ID.metainfo.xml"
  else
    echo "warning: no PROCTOR_PROJECT_URL and no git remote: metainfo left out" >&2
  fi
  tar -C "$OUT/dist" -czf "$OUT/proctor-$VERSION-linux-$(uname -m).tar.gz" proctor
fi

took=$(( $(date +%s) - started ))
size="$(du -sh "$BUNDLE" | cut -f1)"
echo "bundle: $BUNDLE ($size) built in ${took}s"
