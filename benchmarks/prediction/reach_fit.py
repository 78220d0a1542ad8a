"""Fitting a :class:`mara_env.agents.reach.ReachModel`: a small network trained with torch,
shipped as plain arrays that NumPy runs.

Every ``(task, k)`` row of :class:`~mara_env.benchmarks.prediction.reach_episodes.ReachRows` is one
example, labelled 1 when ``k`` nodes from now on reach the target in time. One episode in
:data:`VALIDATION_EVERY` is held out (whole, since an episode's rows are alike); the network is
trained by Adam on minibatches of the rest for up to :data:`MAX_PASSES` passes, its log loss on
the held-out episodes checked :data:`CHECKS_PER_PASS` times a pass, and the weights of the best
check are kept. A feature that never varies on the fitting rows (the family column of a family
the rows lack, such as a family of the user's own) gets no weight, so a task of such a family is
judged on its other features alone. One torch thread, seeded: the same rows give the same
weights on one machine.

Example:
    >>> from mara_env.benchmarks.prediction.reach_episodes import collect_reach_rows
    >>> from mara_env import get_config
    >>> rows = collect_reach_rows(get_config("training", arrival_horizon=20), range(5), every=3,
    ...                           progress=False)
    >>> model, log = fit_reach_network(rows, hidden=(8,), max_passes=1)
    >>> [np.shape(weights) for weights, _ in model.layers] == [(len(FEATURES), 8), (8, 1)]
    True
    >>> sorted(log[0])
    ['check', 'pass', 'validation_log_loss']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mara_env.agents.reach import FEATURES, ReachModel
from mara_env.benchmarks.common.threads import one_torch_thread
from mara_env.benchmarks.prediction.reach_episodes import ReachRows

#: The hidden layers' widths.
HIDDEN = (64, 64)
#: Adam's step size, the minibatch and the L2 penalty.
LEARNING_RATE = 1e-3
BATCH = 1024
WEIGHT_DECAY = 1e-5
#: Most passes over the training rows, and validation checks in each.
MAX_PASSES = 3
CHECKS_PER_PASS = 4
#: One episode in this many is held out to choose the weights.
VALIDATION_EVERY = 5
#: A feature whose spread on the fitting rows is below this is constant there: it is scaled
#: by 1 and gets no weight, so a value it never took cannot move the network's output.
_CONSTANT = 1e-6


def held_out(rows: ReachRows) -> np.ndarray:
    """Whether each row belongs to a held-out episode (one in :data:`VALIDATION_EVERY`, by the
    episodes' sorted names)."""
    names, which = np.unique(rows.episode, return_inverse=True)
    del names
    return which % VALIDATION_EVERY == VALIDATION_EVERY - 1


def fit_reach_network(
    rows: ReachRows,
    *,
    hidden: Sequence[int] = HIDDEN,
    max_passes: int = MAX_PASSES,
    seed: int = 0,
) -> tuple[ReachModel, list[dict[str, Any]]]:
    """The model of lowest held-out log loss, and the log of its checks (module docstring).

    Raises:
        ValueError: Without rows of both outcomes in the training and the held-out episodes.
    """
    import torch

    validation = held_out(rows)
    width = len(FEATURES)
    inputs = rows.features.reshape(len(rows), -1, width)
    train_x, train_y = inputs[~validation].reshape(-1, width), rows.reached[~validation].reshape(-1)
    check_x, check_y = inputs[validation].reshape(-1, width), rows.reached[validation].reshape(-1)
    for name, label in (("training", train_y), ("held-out", check_y)):
        if label.size == 0 or label.all() or not label.any():
            raise ValueError(
                f"fit_reach_network: the {name} episodes need rows of both outcomes "
                f"({label.size} rows); play more (or longer) episodes."
            )
    mean = train_x.mean(axis=0)
    spread = train_x.std(axis=0)
    scale = np.where(spread < _CONSTANT, 1.0, spread)
    with one_torch_thread():
        torch.manual_seed(seed)
        sizes = [width, *hidden, 1]
        parts: list[torch.nn.Module] = []
        for index in range(len(sizes) - 1):
            parts.append(torch.nn.Linear(sizes[index], sizes[index + 1]))
            if index < len(sizes) - 2:
                parts.append(torch.nn.ReLU())
        network = torch.nn.Sequential(*parts).double()
        optimiser = torch.optim.Adam(
            network.parameters(), lr=LEARNING_RATE, weight_decay=WEIGHT_DECAY
        )
        x = torch.from_numpy((train_x - mean) / scale)
        y = torch.from_numpy(train_y.astype(np.float64))
        held_x = torch.from_numpy((check_x - mean) / scale)
        held_y = torch.from_numpy(check_y.astype(np.float64))
        generator = torch.Generator().manual_seed(seed)
        loss = torch.nn.functional.binary_cross_entropy_with_logits
        best: tuple[float, list[np.ndarray]] = (np.inf, [])
        log: list[dict[str, Any]] = []
        batches = -(-len(x) // BATCH)
        marks = {round(batches * (step + 1) / CHECKS_PER_PASS) for step in range(CHECKS_PER_PASS)}
        for epoch in range(max_passes):
            order = torch.randperm(len(x), generator=generator)
            for batch in range(batches):
                picked = order[batch * BATCH : (batch + 1) * BATCH]
                optimiser.zero_grad()
                loss(network(x[picked]).squeeze(-1), y[picked]).backward()
                optimiser.step()
                if batch + 1 in marks:
                    with torch.no_grad():
                        held = float(loss(network(held_x).squeeze(-1), held_y))
                    log.append(
                        {"pass": epoch + 1, "check": len(log) + 1, "validation_log_loss": held}
                    )
                    if held < best[0]:
                        best = (held, [p.detach().numpy().copy() for p in network.parameters()])
    weights = best[1]
    layers = [(weights[2 * i].T.copy(), weights[2 * i + 1]) for i in range(len(weights) // 2)]
    layers[0][0][spread < _CONSTANT] = 0.0  # never seen to vary: no weight (module docstring)
    return ReachModel(tuple(layers), mean, scale), log
