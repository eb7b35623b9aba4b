"""The desk's words go through Qt's translation machinery.

Every user-visible literal in gui/ is written ``tr("…")`` (a placeholder text with values:
``tr("{count} new requests").format(count=n)``); Qt's ``lupdate`` extracts them into one
template, and a translation compiled from it (``proctor_<locale>.qm`` in
resources/i18n/) is loaded at start for the user's locale. The template:

    uv run pyside6-lupdate -extensions py -no-obsolete gui -ts resources/i18n/proctor.ts

lupdate files a bare ``tr("…")`` under the empty context, so ``tr`` translates in that context.
Agent text is never passed through ``tr`` (it is data, not the desk's words).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QLocale, QTranslator

if TYPE_CHECKING:

    def QT_TR_NOOP(message: str, /) -> str:
        """Marks ``message`` for lupdate and returns it unchanged (PySide6's stub says
        ``object -> object``, which loses the str every caller relies on)."""
        ...
else:
    from PySide6.QtCore import QT_TR_NOOP as QT_TR_NOOP  # re-exported for gui/

log = logging.getLogger(__name__)
CONTEXT = ""  # lupdate's context for a free tr() call


def tr(text: str, disambiguation: str | None = None, n: int = -1) -> str:
    """``text`` in the user's language (``text`` itself while no translation is loaded).
    With ``n``, Qt's plural forms: ``tr("Snoozed %n item(s).", n=3)``; a translation gives
    its numerus form, and without one English's two: "1 item", "3 items" (never "item(s)")."""
    out = QCoreApplication.translate(CONTEXT, text, disambiguation, n)
    if n >= 0 and "(s)" in out:  # untranslated: the English forms
        out = out.replace("(s)", "" if n == 1 else "s")
    return out


def install_translator(
    app: QCoreApplication, locale: QLocale | None = None, folder: Path | None = None
) -> QTranslator | None:
    """Load ``proctor_<locale>.qm`` for ``locale`` (default: the system's) if one is there."""
    translator = QTranslator(app)
    where = folder or resources_folder()
    if where is None or not translator.load(locale or QLocale.system(), "proctor", "_", str(where)):
        return None
    app.installTranslator(translator)
    log.info("translation loaded: %s", translator.filePath())
    return translator


def resources_folder() -> Path | None:
    """resources/i18n of this installation (the package's or the source tree's)."""
    from proctor import resources

    folder = Path(resources.__file__).resolve().parent / "i18n"
    return folder if folder.is_dir() else None
