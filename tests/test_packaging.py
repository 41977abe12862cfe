"""The wheel carries every package of hearthd: packages are found, not listed by hand (a new subpackage was once
silently left out of an install)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from setuptools import find_packages

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_under_hearthd_is_found_for_the_wheel() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert "packages" not in config or not isinstance(config["packages"], list)  # no hand-kept list
    include = config["packages"]["find"]["include"]
    found = set(find_packages(str(ROOT), include=include))
    on_disk = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "hearthd").rglob("__init__.py")}
    assert on_disk and on_disk <= found
    mapped = config["package-dir"]  # the data packages (locales, unit files) live beside the code
    assert {"hearthd.locales", "hearthd.systemd"} <= set(mapped)
