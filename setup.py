"""The top-level ``analyses/`` folder (the catalogue's specs and reference numbers) installs
as the package ``collapse_lab.analyses``; everything else is in pyproject.toml."""
from setuptools import find_packages, setup

setup(packages=find_packages(include=["collapse_lab", "collapse_lab.*"]) + ["collapse_lab.analyses"],
      package_dir={"collapse_lab.analyses": "analyses"})
