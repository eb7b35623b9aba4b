"""Operations on whole journals: export and import (``transfer.py``), copying a journal into
another store (``migrate_to.py``) and team mode's server roles (``team.py``)."""
