"""The worlds: the cluster configuration and its presets, and the task terms that hide the effort
in Cluster-v2 and -v3.
"""
