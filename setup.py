"""Package layout only (everything else is in pyproject.toml): the repository's top-level packages are installed
as subpackages of ``wirecheck``, so the wheel claims one top-level import name."""

from setuptools import find_packages, setup

TOP_LEVEL = ("protocols", "strategies", "targets", "reports", "suites")

packages = ["wirecheck"] + [f"wirecheck.{name}" for name in find_packages(include=[f"{top}*" for top in TOP_LEVEL])]
setup(packages=packages, package_dir={"wirecheck": "wirecheck", **{f"wirecheck.{top}": top for top in TOP_LEVEL}})
