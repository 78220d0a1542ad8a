"""The worlds, each declared once (:mod:`mara_env.worlds.world`), the cluster configuration that
names one, and its presets.
"""
