"""Collect real learning curves for mara-env's trace pools.

Each family module (:mod:`~mara_env.benchmarks.collect.vision`, :mod:`~mara_env.benchmarks.collect.rl`,
:mod:`~mara_env.benchmarks.collect.tabular`) defines a grid of training runs (:func:`grid`) and how to run
one (:func:`run`), which trains a real model and records its loss on a fixed work grid.
:mod:`~mara_env.benchmarks.collect.runner` runs grids over worker processes into a resumable store of raw
curves, and :mod:`~mara_env.benchmarks.collect.pack` turns the store into the trace file shipped in
``mara_env/data`` with its data card.

Usage::

    python -m mara_env.benchmarks.collect run --store traces_raw          # every family, both cores
    python -m mara_env.benchmarks.collect run --store traces_raw --smoke  # seconds: a few tiny runs
    python -m mara_env.benchmarks.collect pack --store traces_raw         # write mara_env/data/...
    python -m mara_env.benchmarks.collect pack --from curves.csv --output mine.npz   # your own curves
    python -m mara_env.benchmarks.collect arrivals --from jobs.csv --output arrivals.npz  # your arrivals
"""
