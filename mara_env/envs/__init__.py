"""The environment forms over the simulation core: PettingZoo AEC and Parallel, Gymnasium single
and vector, the batched multi-agent entry, the Stable-Baselines3 ``VecEnv``, and what they share
(one epoch: advance, reward, info; action checks, rendering, registration).
"""
