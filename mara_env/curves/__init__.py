"""Data and curves: recorded and synthetic learning-curve pools, your own curve tables, task
families and workloads, and how tasks arrive.
"""
