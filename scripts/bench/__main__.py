"""Entry point of ``python -m scripts.bench``."""

import sys

from scripts.bench.runner import main

sys.exit(main())
