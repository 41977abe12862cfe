"""The package list, found rather than kept by hand (a new subpackage is never silently left out of the wheel), plus
the two data packages that live beside the code and are mapped in pyproject.toml ([tool.setuptools.package-dir]):
the locale folders (hearthd.locales) and the systemd unit files (hearthd.systemd). setuptools' `packages.find` alone
cannot name a mapped package, so this is the one thing pyproject.toml cannot say."""

from setuptools import find_packages, setup

setup(packages=[*find_packages(include=["hearthd", "hearthd.*"]), "hearthd.locales", "hearthd.systemd"])
