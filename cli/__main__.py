from proctor.hook_guard import install_if_codex_hook

install_if_codex_hook()  # `python -m proctor hook codex`: a SIGTERM from here on denies

import sys  # noqa: E402

from proctor.cli import main  # noqa: E402 (light: a short command may run warm, warm.py)

sys.exit(main())
