"""``python -m dualad``: the ``dualad`` command (tour, trace, check, --version)."""
import sys

from dualad.teaching.cli import main

__all__: list = []

if __name__ == "__main__":
    sys.exit(main())
