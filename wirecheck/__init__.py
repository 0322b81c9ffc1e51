"""wirecheck: conformance and fuzz tests for the wire protocols of streaming brokers.

The repository keeps its packages at the top (``protocols/``, ``strategies/``, ``targets/``, ``reports/``,
``suites/``); the wheel installs them as subpackages of this one, so nothing claims a generic top-level name in
site-packages. In a checkout this package's path also covers the repository root, so ``wirecheck.protocols`` is
the same module in both layouts and the code imports it one way only.
"""

from pathlib import Path

__version__ = "0.1.0"

_here = Path(__file__).resolve().parent
if not (_here / "protocols").is_dir() and (_here.parent / "protocols" / "spec.py").is_file():
    __path__.append(str(_here.parent))  # a checkout: the subpackages are the repository's top-level folders
