"""Benchmarks and scripts of mara-env."""
