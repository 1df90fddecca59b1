"""`python -m kgharness.zygote`: what Go runs (harness/zygote.go)."""

import sys

from .main import main

sys.exit(main())
