"""Data and curves: recorded and synthetic learning-curve pools, your own curve tables, task
families and workloads, how tasks arrive, and how long recorded runs took.
"""
