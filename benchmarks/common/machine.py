"""Where a result was computed: the platform line every result's provenance carries.

Floats may differ in their last bits from one CPU instruction set or NumPy version to another
(:mod:`mara_env.portability`), so a reader of a figure needs to know where it came from: the CPU
model, the SIMD extensions NumPy uses on it, and the versions of NumPy, Numba, torch and Python.

Example:
    >>> facts = platform_facts()
    >>> sorted(facts)
    ['cpu', 'numba', 'numpy', 'numpy_simd', 'python', 'system', 'torch']
    >>> platform_line().startswith(facts["cpu"])
    True
"""

from __future__ import annotations

import importlib
import os
import platform
from functools import lru_cache
from importlib import metadata
from pathlib import Path

import numpy as np


def cpu_model() -> str:
    """The CPU's model name (Linux's ``/proc/cpuinfo``; elsewhere what ``platform`` knows)."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Model", "Hardware") and value.strip():
                return value.strip()
    return platform.processor() or platform.machine() or "unknown CPU"


def numpy_simd() -> str:
    """The SIMD extensions NumPy's dispatched loops use on this CPU (its baseline, then each
    enabled dispatch target), e.g. ``X86_V2 X86_V3 X86_V4 AVX512_ICL``."""
    try:
        umath = importlib.import_module("numpy._core._multiarray_umath")  # NumPy 2
    except ImportError:
        umath = importlib.import_module("numpy.core._multiarray_umath")  # NumPy 1.x
    baseline = list(getattr(umath, "__cpu_baseline__", []))
    features = getattr(umath, "__cpu_features__", {})
    dispatched = [name for name in getattr(umath, "__cpu_dispatch__", []) if features.get(name)]
    return " ".join([*baseline, *dispatched]) or "none reported"


def installed_version(distribution: str) -> str | None:
    """The installed version of ``distribution``, or ``None`` if it is not installed."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


@lru_cache(maxsize=1)
def platform_facts() -> dict[str, str]:
    """The platform as a JSON-ready dict (see :func:`platform_line`)."""
    return {
        "cpu": cpu_model(),
        "system": f"{platform.system()} {platform.machine()}",
        "numpy": np.__version__,
        "numpy_simd": numpy_simd(),
        "numba": installed_version("numba") or "not installed",
        "torch": installed_version("torch") or "not installed",
        "python": platform.python_version(),
    }


def platform_line() -> str:
    """One line naming the platform: CPU, system, NumPy with its SIMD extensions, Numba, torch
    and Python."""
    facts = platform_facts()
    return (
        f"{facts['cpu']} ({facts['system']}); NumPy {facts['numpy']} (SIMD: "
        f"{facts['numpy_simd']}), Numba {facts['numba']}, torch {facts['torch']}, Python "
        f"{facts['python']}"
    )


def available_cores() -> int:
    """CPU cores this process may use (its affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1
