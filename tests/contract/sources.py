"""The source files that make up one protocol's suite: its cases, its strategies and its capture checks."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

CASE_MARK = re.compile(r'(?:@case|mark\.case)\(\s*"([^"]+)"')


def module_files(name: str) -> list[Path]:
    """The .py files of a module or package (none when it does not exist)."""
    try:
        found = importlib.util.find_spec(name)
    except ModuleNotFoundError:
        return []
    if found is None or found.origin is None:
        return []
    if found.submodule_search_locations:
        return sorted(p for location in found.submodule_search_locations for p in Path(location).rglob("*.py"))
    return [Path(found.origin)]


def protocol_sources(spec) -> list[Path]:
    files = module_files(spec.suite) + module_files(spec.strategies)
    if spec.capture is not None:
        files += module_files(spec.capture.module)
    return files


def text_of(files: list[Path]) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in files)


def case_ids(files: list[Path]) -> set[str]:
    return set(CASE_MARK.findall(text_of(files)))
