"""Sensor definitions (one TOML file per sensor), installed as package data."""
