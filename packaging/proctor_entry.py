"""The bundle's one entry script. The executable's name picks the program:

    proctor        the command line (proctor.cli)
    proctor-desk   the desk (proctor.gui.shell.launch): what the menu entry starts

``proctor -m MODULE ARGS`` runs a bundled module as a script, so code that starts
``sys.executable -m proctor.sim.agent_process`` (the simulated agents of ``proctor demo``)
works in the bundle as it does from a wheel.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path


def main() -> int:
    program = Path(sys.executable).stem.lower()
    if program == "proctor" and len(sys.argv) >= 3 and sys.argv[1] == "-m":
        module = sys.argv[2]
        sys.argv = [sys.argv[0], *sys.argv[3:]]
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        return 0
    if program == "proctor":
        from proctor.cli import main as cli_main

        return cli_main()
    from proctor.gui.shell.launch import main as desk_main

    return desk_main()


if __name__ == "__main__":
    sys.exit(main())
