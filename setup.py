"""Package layout only (everything else is in pyproject.toml): the repository's top-level packages are installed
as subpackages of ``wirecheck``, so the wheel claims one top-level import name."""

from setuptools import find_packages, setup

TOP_LEVEL = ("protocols", "strategies", "targets", "reports", "suites", "broker")

#: Folders of package data only (no __init__.py): listed so that setuptools ships them without warning that an
#: importable folder is missing from the packages.
DATA_ONLY = ("wirecheck.reports.html.assets",)

packages = (["wirecheck"] + [f"wirecheck.{name}" for name in find_packages(include=[f"{top}*" for top in TOP_LEVEL])]
            + list(DATA_ONLY))
setup(packages=packages, package_dir={"wirecheck": "wirecheck", **{f"wirecheck.{top}": top for top in TOP_LEVEL}})
