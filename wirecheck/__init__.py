"""wirecheck: conformance and fuzz tests for the wire protocols of streaming brokers.

The repository keeps its packages at the top (``protocols/``, ``strategies/``, ``targets/``, ``reports/``,
``suites/``); the wheel installs them as subpackages of this one, so nothing claims a generic top-level name in
site-packages. In a checkout, ``wirecheck/<package>`` is a symbolic link to the top-level folder, so
``wirecheck.protocols`` is the same file in both layouts, for Python and for static tools alike.
"""

__version__ = "0.1.0"
