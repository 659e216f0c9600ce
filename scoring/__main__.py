"""``python -m scoring``: see ``scoring.prm.cli``."""
import sys

from scoring.prm.cli import main

sys.exit(main())
