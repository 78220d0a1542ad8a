"""The simulation core: a batch of clusters as NumPy arrays, the world's rules, its compiled loops,
one cluster's view of a batch, and the observation schedulers read.

Pure NumPy and Numba, with explicit state and one seeded generator per episode; the environment
forms in :mod:`mara_env.envs` are thin adapters over it.
"""
