"""Loss-trajectory predictors for mara-env schedulers.

This package will hold the remaining-work predictors (weighted least squares, dynamic Kalman
filter, conditional flow matching) and their observation wrappers. Release 0.1.0 ships none yet;
schedulers in :mod:`agents` read the environment's observations directly.
"""
