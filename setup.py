"""Packaging shim: the sensor data files live in the top-level ``sensors/`` folder and are
installed as the ``pansharp_iqa.sensor_files`` package (all metadata is in ``pyproject.toml``)."""
from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["pansharp_iqa", "pansharp_iqa.*"]) + ["pansharp_iqa.sensor_files"],
    package_dir={"pansharp_iqa.sensor_files": "sensors"},
)
