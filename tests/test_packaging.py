"""The wheel carries every package of hearthd: packages are found, not listed by hand (a new subpackage was once
silently left out of an install), and the data packages mapped beside the code (locales, unit files) are installed
too (a `packages.find` table alone could not name them: a fresh install then had no languages at all)."""

from __future__ import annotations

import runpy
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_on_disk_and_every_mapped_one_goes_in_the_wheel(monkeypatch: pytest.MonkeyPatch) -> None:
    import setuptools

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert "packages" not in config  # no hand-kept list: setup.py finds them
    seen: dict[str, Any] = {}
    monkeypatch.setattr(setuptools, "setup", lambda **kw: seen.update(kw))
    monkeypatch.chdir(ROOT)
    runpy.run_path(str(ROOT / "setup.py"))
    packages = set(seen["packages"])
    on_disk = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "hearthd").rglob("__init__.py")}
    assert on_disk and on_disk <= packages
    assert set(config["package-dir"]) <= packages  # hearthd.locales, hearthd.systemd


def test_the_installed_package_has_its_languages_and_unit_files() -> None:
    languages = {e.name for e in resources.files("hearthd.locales").iterdir() if e.is_dir()}
    assert {"en", "hi", "ru"} <= languages
    assert any(e.name.endswith(".service") for e in resources.files("hearthd.systemd").iterdir())
