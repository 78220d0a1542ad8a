"""The simulation core: a batch of clusters as NumPy arrays, the world's rules, the tasks an
episode draws by them (Cluster-v3's hidden effort included), its compiled loops, one cluster's
view of a batch, and the observation schedulers read.

Pure NumPy and Numba, with explicit state and one seeded generator per episode; the environment
forms in :mod:`mara_env.envs` are thin adapters over it.

The sub-packages of ``mara_env`` import in one order: :mod:`mara_env.curves`, then
:mod:`mara_env.worlds`, then this one, then :mod:`mara_env.envs`; each imports only those
before it.
"""
