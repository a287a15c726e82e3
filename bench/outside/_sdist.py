"""A peer's source distribution from PyPI, cached in ~/.cache/dualad (never committed)."""
from __future__ import annotations

import pathlib
import subprocess
import sys


def sdist(package: str, version: str, path: str | None = None) -> pathlib.Path:
    """``path`` when given (a tarball or an unpacked tree), else ``package==version``'s
    sdist, downloaded once with ``pip download --no-binary :all:``."""
    if path:
        return pathlib.Path(path)
    cache = pathlib.Path.home() / ".cache" / "dualad"
    target = cache / f"{package}-{version}.tar.gz"
    if not target.exists():
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                        "--no-binary", ":all:", f"{package}=={version}", "-d", str(cache)],
                       check=True)
    return target
