"""The harness reuses the CLI tests' data helpers (``tests/cli/cli_helpers.py``)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
