"""`python -m kgharness.sandbox`: the Landlock rules for a temp dir and what the probe finds."""

import sys

from .walls import main

sys.exit(main())
