"""``python -m mnemo.local.cli``."""

import sys

from mnemo.local.cli import main

sys.exit(main())
