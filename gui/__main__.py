"""``python -m proctor.gui``: the desk (the same as the ``proctor-desk`` launcher)."""

import sys

from proctor.gui.shell.launch import main

if __name__ == "__main__":
    sys.exit(main())
