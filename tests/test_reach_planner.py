"""The reach model (observation-only P(reach | k nodes)) and the reach planner built on it."""

from __future__ import annotations

import json

import numpy as np
import pytest

import mara_env
from mara_env.agents import evaluate, make_agent
from mara_env.agents.priority import EarliestDeadlineFirst
from mara_env.agents.reach import (
    FEATURES,
    ReachModel,
    load_reach_model,
    reach_features,
    reach_model_path,
)
from mara_env.agents.reach_planner import ReachPlanner
from mara_env.errors import CheckpointError
from mara_env.sim.observation import SlotView

WIDTH = len(FEATURES)


def flat_model(bias: float = 0.0) -> ReachModel:
    """A model that gives every task and node count the same probability."""
    return ReachModel.logistic(np.zeros(WIDTH), bias)


def two_layer_model(seed: int = 0) -> ReachModel:
    rng = np.random.default_rng(seed)
    layers = (
        (rng.normal(size=(WIDTH, 4)), rng.normal(size=4)),
        (rng.normal(size=(4, 1)), rng.normal(size=1)),
    )
    return ReachModel(layers, rng.normal(size=WIDTH), np.full(WIDTH, 2.0))


class FixedModel(ReachModel):
    """A model whose probabilities the test sets per slot and node count."""

    table: np.ndarray = np.zeros((0, 0))

    def probabilities(self, view: SlotView, config: mara_env.ClusterConfig) -> np.ndarray:
        return np.where(view.occupied[:, None], self.table, 0.0)


def fixed_model(table: np.ndarray) -> FixedModel:
    model = FixedModel(flat_model().layers, np.zeros(WIDTH), np.ones(WIDTH))
    object.__setattr__(model, "table", np.asarray(table, dtype=np.float64))
    return model


#: A short episode of the training preset: 8 nodes, 16 slots.
SHORT = mara_env.get_config("training", arrival_horizon=30)


def first_view(seed: int = 3) -> tuple[SlotView, mara_env.ClusterConfig]:
    env = mara_env.raw_env(config=SHORT)
    env.reset(seed=seed)
    for _ in range(5 * env.config.n_nodes):  # a few epochs in, so tasks have a history
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    observation = env.observe(env.agent_selection)["observation"]
    return mara_env.decode_observation(observation, env.config), env.config


def test_features_have_one_finite_row_per_slot_and_node_count():
    view, config = first_view()
    features = reach_features(view, config)
    assert features.shape == (config.n_slots, config.task_node_limit, len(FEATURES))
    assert np.isfinite(features).all()
    log_nodes = features[:, :, FEATURES.index("log_nodes")]
    assert np.allclose(log_nodes, np.log(np.arange(1, config.task_node_limit + 1))[None, :])
    ahead = features[view.occupied][:, :, FEATURES.index("log_steps_ahead")]
    assert (np.diff(ahead, axis=1) >= 0).all()  # more nodes carry a task at least as far


def test_probabilities_never_fall_with_more_nodes_and_are_zero_on_empty_slots():
    view, config = first_view()
    probability = two_layer_model().probabilities(view, config)
    assert probability.shape == (config.n_slots, config.task_node_limit)
    assert (np.diff(probability, axis=1) >= 0).all()
    assert (probability[~view.occupied] == 0).all()
    assert ((probability >= 0) & (probability <= 1)).all()


@pytest.mark.parametrize(
    "arrays",
    [
        (((np.zeros((3, 1)), np.zeros(1)),), np.zeros(WIDTH), np.ones(WIDTH)),  # wrong inputs
        (((np.zeros((WIDTH, 2)), np.zeros(2)),), np.zeros(WIDTH), np.ones(WIDTH)),  # two outputs
        (((np.zeros((WIDTH, 1)), np.zeros(3)),), np.zeros(WIDTH), np.ones(WIDTH)),  # bias shape
        ((), np.zeros(WIDTH), np.ones(WIDTH)),  # no layer
        (((np.zeros((WIDTH, 1)), np.zeros(1)),), np.zeros(WIDTH), np.zeros(WIDTH)),  # zero scale
        (((np.full((WIDTH, 1), np.nan), np.zeros(1)),), np.zeros(WIDTH), np.ones(WIDTH)),
        (((np.zeros((WIDTH, 1)), np.zeros(1)),), np.zeros(2), np.ones(WIDTH)),
    ],
)
def test_a_malformed_model_is_refused(arrays):
    with pytest.raises(CheckpointError, match="fit the model again"):
        ReachModel(*arrays)


def test_two_layers_compute_relu_then_linear():
    model = two_layer_model()
    rows = np.random.default_rng(1).normal(size=(3, WIDTH))
    (w1, b1), (w2, b2) = model.layers
    expected = (np.maximum((rows - model.mean) / model.scale @ w1 + b1, 0) @ w2 + b2)[:, 0]
    assert np.allclose(model.logits(rows), expected)


def test_a_model_file_round_trips(tmp_path):
    model = two_layer_model()
    model = ReachModel(
        model.layers,
        model.mean,
        model.scale,
        planner={"drop": 0.3, "ask": None},
        facts={"world_version": 3},
    )
    path = tmp_path / "model.json"
    path.write_text(json.dumps(model.to_json()), encoding="utf-8")
    loaded = load_reach_model(path)
    rows = np.random.default_rng(2).normal(size=(5, WIDTH))
    assert np.array_equal(loaded.logits(rows), model.logits(rows))
    assert loaded.planner == {"drop": 0.3, "ask": None}


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (None, "is missing"),
        (b"\xff\xfe not json", "not UTF-8 JSON"),
        (json.dumps({"format": 99}).encode(), "not a format-1 model"),
        (json.dumps({"format": 1, "features": ["x"]}).encode(), "other features"),
        (json.dumps({"format": 1, "features": list(FEATURES), "mean": []}).encode(), "lacks"),
        (json.dumps({"format": 1, "features": list(FEATURES), "layers": [7]}).encode(), "lacks"),
        (
            json.dumps(
                {
                    "format": 1,
                    "features": list(FEATURES),
                    "layers": [{"weights": [[0.0]], "bias": [0.0]}],
                    "mean": [0.0],
                    "scale": [1.0],
                }
            ).encode(),
            "expected",
        ),
    ],
)
def test_a_bad_model_file_gets_a_checkpoint_error_naming_it(tmp_path, content, match):
    path = tmp_path / "reach.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(CheckpointError, match=match) as caught:
        load_reach_model(path)
    assert "reach.json" in str(caught.value)


@pytest.mark.parametrize(
    ("drop", "ask"), [(1.0, None), (-0.1, None), (True, None), (0.2, 0.0), (0.2, 1.5)]
)
def test_settings_out_of_range_are_refused(drop, ask):
    with pytest.raises(ValueError, match="ReachPlanner"):
        ReachPlanner(flat_model(), drop=drop, ask=ask)


def test_without_drop_or_sizing_it_plays_exactly_as_earliest_deadline_first():
    planner = ReachPlanner(flat_model(), drop=0.0, ask=None)
    config = SHORT
    keys = ("completed", "arrived", "switches", "utilisation")
    mine = evaluate(planner, config, seeds=[5, 6])
    edf = evaluate(EarliestDeadlineFirst(), config, seeds=[5, 6])
    assert [[row[key] for key in keys] for row in mine] == [
        [row[key] for key in keys] for row in edf
    ]


def test_dropped_tasks_get_only_the_nodes_hopeful_tasks_cannot_use():
    view, config = first_view()
    occupied = np.flatnonzero(view.occupied)
    assert len(occupied) >= 2
    table = np.full((config.n_slots, config.task_node_limit), 0.9)
    table[occupied[1:]] = 0.05  # every task but one is unlikely
    planner = ReachPlanner(fixed_model(table), drop=0.2)
    planner.reset(config, seed=0)
    mask = np.ones(config.n_actions, dtype=np.int8)
    mask[:-1] = view.occupied
    actions = planner.plan(view, mask)
    on_hopeful = int((actions == occupied[0]).sum())
    assert on_hopeful == config.task_node_limit  # it takes every node it may get
    spare = config.n_nodes - on_hopeful
    assert int(np.isin(actions, occupied[1:]).sum()) == spare  # the rest go to dropped tasks


def test_sizing_gives_a_task_the_fewest_nodes_that_keep_its_chance():
    view, config = first_view()
    occupied = np.flatnonzero(view.occupied)
    ramp = np.minimum(np.arange(1, config.task_node_limit + 1) / 2.0, 1.0) * 0.8  # full at 2 nodes
    table = np.tile(ramp, (config.n_slots, 1))
    planner = ReachPlanner(fixed_model(table), drop=0.1, ask=0.95)
    planner.reset(config, seed=0)
    mask = np.ones(config.n_actions, dtype=np.int8)
    mask[:-1] = view.occupied
    counts = np.bincount(planner.plan(view, mask), minlength=config.n_actions)[occupied]
    served = np.argsort(view.time_left[occupied], kind="stable")
    if len(occupied) * 2 >= config.n_nodes:
        assert (
            counts[served][: config.n_nodes // 2] == 2
        ).all()  # two each, earliest deadlines first
    assert counts.sum() == min(config.n_nodes, len(occupied) * config.task_node_limit)


def test_the_registry_builds_it_with_the_shipped_model_and_settings():
    planner = make_agent("reach_planner")
    shipped = load_reach_model()
    assert planner.name == "reach_planner"
    assert (planner.drop, planner.ask) == (shipped.planner["drop"], shipped.planner["ask"])
    assert reach_model_path().is_file()
    assert make_agent("reach_planner", drop=0.5).drop == 0.5
    rows = evaluate(planner, SHORT, seeds=[0])
    assert rows[0]["illegal_actions"] == 0


def test_the_fit_script_ships_a_model_the_planner_loads(tmp_path):
    from mara_env.benchmarks.prediction.reach_model import PLANNER_GRID, main

    model_path, output = tmp_path / "model.json", tmp_path / "results"
    assert (
        main(["--quick", "--model", str(model_path), "--output", str(output), "--no-progress"]) == 0
    )
    model = load_reach_model(model_path)
    assert model.planner["drop"] in PLANNER_GRID["drop"]
    assert model.planner["ask"] in PLANNER_GRID["ask"]
    assert model.facts["fit_rows"] > 0
    page = (output / "README.md").read_text(encoding="utf-8")
    assert "## Which tasks can still finish" in page and "**" in page  # the chosen row is bold
    for name in ("scores.csv", "search.csv", "reliability.csv", "fit_log.csv", "reliability.png"):
        assert (output / name).stat().st_size > 0
    planner = make_agent("reach_planner")  # the shipped one is untouched
    assert planner.model is load_reach_model()


def test_a_family_the_fit_never_saw_moves_nothing():
    from mara_env.benchmarks.prediction.reach_episodes import collect_reach_rows
    from mara_env.benchmarks.prediction.reach_fit import fit_reach_network

    rows = collect_reach_rows(SHORT, range(6), every=3, progress=False)
    model, _ = fit_reach_network(rows, hidden=(8,), max_passes=1)
    other = FEATURES.index("family_other")
    assert not rows.features[..., other].any()  # the shipped families only
    assert (model.layers[0][0][other] == 0).all()
    shifted = rows.features.copy()
    shifted[..., other] = 1.0
    assert np.array_equal(model.logits(shifted), model.logits(rows.features))
