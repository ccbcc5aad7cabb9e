"""Entry point of ``python -m scripts``."""

import sys

from scripts.cli import main

sys.exit(main())
