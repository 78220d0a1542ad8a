"""Bad input raises the project's own exceptions with messages that say what was wrong.

Covers invalid configuration values, malformed actions in every API form, strict mode, calls
before ``reset()``, corrupt trace files and unknown render modes. Messages are checked loosely
(they must name the offending field, value or file).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pettingzoo
import pytest

import mara_env
from mara_env import (
    ActionError,
    ClusterConfig,
    ClusterSimulator,
    ConfigError,
    CurvePool,
    EnvStateError,
    SyntheticTraceSource,
    TraceError,
    TraceFileSource,
    get_config,
    save_traces,
)

# gym.make itself warns before the environment rejects an unknown render_mode.
# Each test starts from an empty workload cache (see conftest.isolated_workload_cache).
pytestmark = [
    pytest.mark.filterwarnings("ignore:.*not in the possible render_modes"),
    pytest.mark.usefixtures("isolated_workload_cache"),
]

# ---------------------------------------------------------------------------- configuration
BAD_CONFIG_VALUES: list[tuple[str, Any]] = [
    ("n_nodes", 0),
    ("n_nodes", -3),
    ("n_nodes", 2.5),
    ("n_nodes", True),
    ("n_nodes", "8"),
    ("n_slots", 0),
    ("arrival_horizon", 0),
    ("max_epochs", 0),
    ("max_epochs", 100),  # must exceed the default arrival horizon of 100
    ("deadline_nodes", 0),
    ("load", -1.0),
    ("load", 0.0),
    ("load", math.nan),
    ("load", math.inf),
    ("load", "high"),
    ("switch_cost", 1.0),
    ("switch_cost", -0.1),
    ("switch_cost", math.nan),
    ("alpha", 0.0),
    ("alpha", 1.5),
    ("alpha", -0.5),
    ("alpha", math.nan),
    ("epochs_per_curve", (40.0, 10.0)),
    ("epochs_per_curve", (0.0, 10.0)),
    ("epochs_per_curve", (math.nan, 10.0)),
    ("epochs_per_curve", (10.0,)),
    ("epochs_per_curve", [10.0, 40.0]),
    ("target_fraction", (0.5, 1.5)),
    ("target_fraction", (-0.1, 0.5)),
    ("target_fraction", (0.8, 0.2)),
    ("infeasible_share", 1.5),
    ("infeasible_share", -0.1),
    ("slack_range", (0.5, 2.0)),
    ("slack_range", (3.0, 2.0)),
    ("slack_range", (1.0, math.inf)),
    ("max_nodes_per_task", 0),
    ("max_nodes_per_task", 1.5),
    ("shaping_weight", -1.0),
    ("shaping_weight", math.nan),
    ("shaping_weight", math.inf),
    ("shaping_discount", 0.0),
    ("shaping_discount", 1.5),
    ("shaping_discount", math.nan),
    ("shaping_discount", True),
    ("split", "validation"),
    ("family_weights", (("unknown", 1.0),)),
    ("family_weights", (("synthetic", 1.0), ("synthetic", 2.0))),
    ("family_weights", ()),
    ("family_weights", (("synthetic", 0.0),)),
    ("family_weights", (("synthetic", -1.0),)),
    ("family_weights", (("synthetic", math.nan),)),
    ("family_weights", (("synthetic",),)),
    ("family_weights", "synthetic"),
]


@pytest.mark.parametrize(("field", "value"), BAD_CONFIG_VALUES, ids=repr)
def test_invalid_config_value_raises_config_error_naming_the_field(field: str, value: Any) -> None:
    """Every invalid field value raises ConfigError whose message names the field."""
    with pytest.raises(ConfigError, match=re.escape(f"ClusterConfig.{field}")):
        ClusterConfig(**{field: value})
    with pytest.raises(ConfigError, match=re.escape(field)):
        ClusterConfig().replace(**{field: value})


@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: mara_env.env(**kw),
        lambda **kw: mara_env.raw_env(**kw),
        lambda **kw: mara_env.parallel_env(**kw),
        lambda **kw: pettingzoo.make("aec", mara_env.ENV_ID, **kw),
        lambda **kw: pettingzoo.make("parallel", mara_env.ENV_ID, **kw),
        lambda **kw: gym.make(mara_env.ENV_ID, **kw),
    ],
    ids=["env", "raw_env", "parallel_env", "pz_make_aec", "pz_make_parallel", "gym_make"],
)
def test_env_constructors_reject_bad_config(make: Callable[..., Any]) -> None:
    """Every constructor validates overrides, presets and override names."""
    with pytest.raises(ConfigError, match="n_nodes"):
        make(config="tiny", n_nodes=0)
    with pytest.raises(ConfigError, match="no_such_preset"):
        make(config="no_such_preset")
    with pytest.raises(ConfigError, match="n_gpus"):
        make(config="tiny", n_gpus=4)
    with pytest.raises(ConfigError, match="render_mode"):
        make(config="tiny", render_mode="video")


def test_unknown_preset_lists_the_known_ones() -> None:
    """get_config names the unknown preset and lists the known presets."""
    with pytest.raises(ConfigError, match="'nope'") as raised:
        get_config("nope")
    assert "training" in str(raised.value) and "tiny" in str(raised.value)
    with pytest.raises(ConfigError):
        get_config(42)  # type: ignore[arg-type]


def test_unknown_override_field_is_named() -> None:
    """An override that is no ClusterConfig field is named in the error, with known fields."""
    with pytest.raises(ConfigError, match="bogus") as raised:
        get_config("tiny", bogus=1)
    assert "n_nodes" in str(raised.value)
    with pytest.raises(ConfigError, match="_families"):
        ClusterConfig().replace(_families=("synthetic",))


def test_configured_family_missing_from_trace_source() -> None:
    """A family the trace source lacks raises TraceError naming that family."""
    with pytest.raises(TraceError, match="vision"):
        mara_env.raw_env(
            config="tiny",
            family_weights=(("vision", 1.0),),
            trace_source=mara_env.SyntheticTraceSource(n_curves=20, length=50),
        )


def test_configs_are_frozen() -> None:
    """Configs cannot be mutated after validation."""
    config = get_config("tiny")
    with pytest.raises(AttributeError):
        config.n_nodes = 0  # type: ignore[misc]


# ---------------------------------------------------------------------------- actions
BAD_SCALAR_ACTIONS: list[Any] = [
    "0",
    1.0,
    np.float64(1.0),
    None,
    True,
    np.bool_(False),
    -1,
    np.int64(-1),
    4,  # tiny: n_slots = 3, so the largest action is 3 (idle)
    5,
    np.array([0, 1]),
    [0],
    {"slot": 0},
]


@pytest.mark.parametrize("make", [mara_env.raw_env, mara_env.env], ids=["raw_env", "env"])
@pytest.mark.parametrize("action", BAD_SCALAR_ACTIONS, ids=repr)
def test_aec_rejects_actions_of_wrong_type_or_range(make: Callable[..., Any], action: Any) -> None:
    """AEC step() raises ActionError for a live agent's out-of-space action, naming the agent,
    and leaves the env untouched so that a valid action can follow."""
    env = make(config="tiny")
    env.reset(seed=0)
    assert env.unwrapped.config.n_slots == 3
    before = env.state().copy()
    with pytest.raises(ActionError, match="node_0") as raised:
        env.step(action)
    assert "action" in str(raised.value)
    assert env.agent_selection == "node_0"
    np.testing.assert_array_equal(env.state(), before)
    env.step(env.unwrapped.config.idle_action)
    assert env.agent_selection == "node_1"


@pytest.mark.parametrize("action", [np.int64(2), np.array(1), np.uint8(3), 0])
def test_aec_accepts_numpy_integer_actions(action: Any) -> None:
    """NumPy integers and 0-d integer arrays are valid actions."""
    env = mara_env.raw_env(config="tiny")
    env.reset(seed=0)
    env.step(action)
    assert env.agent_selection == "node_1"


@pytest.mark.parametrize(
    ("actions", "match"),
    [
        ({"node_0": 0}, "node_1"),
        ({"node_0": 0, "node_1": 0, "node_7": 0}, "node_7"),
        ({}, "node_0"),
        ([0, 0], "dict"),
        (None, "dict"),
        ({"node_0": 0, "node_1": "idle"}, "action"),
        ({"node_0": 0, "node_1": 1.5}, "action"),
        ({"node_0": 0, "node_1": None}, "action"),
        ({"node_0": True, "node_1": 0}, "action"),
        ({"node_0": False, "node_1": True}, "action"),
        ({"node_0": -1, "node_1": 0}, r"outside \[0, 3\]"),
        ({"node_0": 0, "node_1": 4}, r"outside \[0, 3\]"),
    ],
    ids=repr,
)
def test_parallel_rejects_bad_action_dicts(actions: Any, match: str) -> None:
    """Parallel step() needs exactly one in-space action per live agent."""
    env = mara_env.parallel_env(config="tiny")
    env.reset(seed=0)
    before = env.state().copy()
    with pytest.raises(ActionError, match=match):
        env.step(actions)
    np.testing.assert_array_equal(env.state(), before)
    assert env.simulator.state.epoch == 0


@pytest.mark.parametrize(
    ("action", "match"),
    [
        (np.array([0, 0, 0]), "expected 2 actions"),
        (np.array([0]), "expected 2 actions"),
        (np.array(0), "expected 2 actions"),
        (np.zeros((2, 1), dtype=np.int64), "expected 2 actions"),
        (np.array([0, -1]), r"outside \[0, 3\]"),
        (np.array([4, 0]), r"outside \[0, 3\]"),
        (np.array([0.0, 1.0]), "must be an int"),
        (np.array([True, False]), "must be an int"),
        (np.array(["a", "b"]), "must be an int"),
        ([0, None], "must be an int"),
        ([True, 0], "must be an int"),
    ],
    ids=repr,
)
def test_gym_rejects_actions_of_wrong_shape_type_or_range(action: Any, match: str) -> None:
    """Gymnasium step() raises ActionError for anything outside MultiDiscrete([4, 4])."""
    env = gym.make(mara_env.ENV_ID, config="tiny").unwrapped
    env.reset(seed=0)
    with pytest.raises(ActionError, match=match):
        env.step(action)
    assert env.simulator.state.epoch == 0


def _empty_slot(mask: np.ndarray) -> int:
    empty = np.flatnonzero(mask[:-1] == 0)
    assert len(empty), "the scenario needs an empty slot"
    return int(empty[0])


def test_strict_aec_raises_on_a_masked_empty_slot() -> None:
    """strict=True: choosing an empty slot raises ActionError mentioning the mask."""
    env = mara_env.raw_env(config="tiny", n_slots=16, strict=True)
    env.reset(seed=0)
    slot = _empty_slot(env.observe("node_0")["action_mask"])
    with pytest.raises(ActionError, match="mask"):
        env.step(slot)
    relaxed = mara_env.raw_env(config="tiny", n_slots=16)
    relaxed.reset(seed=0)
    relaxed.step(slot)  # without strict it idles and is counted
    assert relaxed.simulator.state.illegal_actions == 1


def test_strict_aec_raises_on_a_task_at_max_nodes_per_task() -> None:
    """strict=True with max_nodes_per_task=1: a second node on the same task raises."""
    env = mara_env.raw_env(config="tiny", n_nodes=2, max_nodes_per_task=1, strict=True)
    for seed in range(100):
        env.reset(seed=seed)
        if env.observe("node_0")["action_mask"][0]:
            break
    env.step(0)
    assert env.observe("node_1")["action_mask"][0] == 0
    with pytest.raises(ActionError, match="max_nodes_per_task"):
        env.step(0)


def test_strict_parallel_and_gym_raise_on_a_masked_empty_slot() -> None:
    """strict=True in the Parallel and Gymnasium forms raises on an empty-slot choice."""
    parallel = mara_env.parallel_env(config="tiny", n_slots=16, strict=True)
    observations, _ = parallel.reset(seed=0)
    slot = _empty_slot(observations["node_0"]["action_mask"])
    idle = parallel.config.idle_action
    with pytest.raises(ActionError, match="empty"):
        parallel.step({"node_0": idle, "node_1": slot})
    gym_env = gym.make(mara_env.ENV_ID, config="tiny", n_slots=16, strict=True).unwrapped
    gym_env.reset(seed=0)
    with pytest.raises(ActionError, match="node 1"):
        gym_env.step(np.array([idle, slot]))


# ---------------------------------------------------------------------------- call order
def test_raw_aec_env_before_reset_raises_env_state_error() -> None:
    """raw_env: step, observe and state before reset() raise EnvStateError saying reset()."""
    env = mara_env.raw_env(config="tiny")
    for call in (lambda: env.step(0), lambda: env.observe("node_0"), env.state):
        with pytest.raises(EnvStateError, match=r"reset\(\)"):
            call()


def test_parallel_env_before_reset_raises_env_state_error() -> None:
    """parallel_env: step and state before reset() raise EnvStateError."""
    env = mara_env.parallel_env(config="tiny")
    with pytest.raises(EnvStateError, match=r"reset\(\)"):
        env.step({"node_0": 0, "node_1": 0})
    with pytest.raises(EnvStateError, match=r"reset\(\)"):
        env.state()


def test_gym_env_before_reset_raises_env_state_error() -> None:
    """Gymnasium (unwrapped): step and action_masks before reset() raise EnvStateError."""
    env = gym.make(mara_env.ENV_ID, config="tiny").unwrapped
    with pytest.raises(EnvStateError, match=r"reset\(\)"):
        env.step(np.array([0, 0]))
    with pytest.raises(EnvStateError, match=r"reset\(\)"):
        env.action_masks()


def test_simulator_before_reset_raises_env_state_error() -> None:
    """ClusterSimulator: state, advance and the privileged API need an episode."""
    sim = ClusterSimulator(get_config("tiny"))
    assert not sim.has_episode
    for call in (
        lambda: sim.state,
        lambda: sim.advance(np.array([0, 0])),
        sim.privileged_remaining_work,
        sim.episode_metrics,
    ):
        with pytest.raises(EnvStateError, match=r"reset\(\)"):
            call()


def _play_aec_to_the_end(env: Any) -> dict[str, Any]:
    """Step ``env`` (AEC) to the end with idle nodes; the last epoch's info."""
    info: dict[str, Any] = {}
    for _agent in env.agent_iter():
        _, _, termination, truncation, info = env.last()
        env.step(None if termination or truncation else env.config.idle_action)
    return info


def _play_parallel_to_the_end(env: Any) -> dict[str, Any]:
    infos: dict[str, Any] = {}
    while env.agents:
        _, _, _, _, infos = env.step(dict.fromkeys(env.agents, env.config.idle_action))
    return infos["node_0"]


def _play_gym_to_the_end(env: Any) -> dict[str, Any]:
    idle = np.full(env.unwrapped.config.n_nodes, env.unwrapped.config.idle_action)
    while True:
        _, _, terminated, truncated, info = env.step(idle)
        if terminated or truncated:
            return info


@pytest.mark.parametrize(
    ("make", "play", "action"),
    [
        (lambda: mara_env.raw_env(config="tiny"), _play_aec_to_the_end, 0),
        (lambda: mara_env.env(config="tiny"), _play_aec_to_the_end, 0),
        (
            lambda: mara_env.parallel_env(config="tiny"),
            _play_parallel_to_the_end,
            {"node_0": 0, "node_1": 0},
        ),
        (lambda: gym.make(mara_env.ENV_ID, config="tiny"), _play_gym_to_the_end, [0, 0]),
    ],
    ids=["aec raw", "aec wrapped", "parallel", "gymnasium"],
)
def test_every_form_refuses_to_step_after_the_episode_ended_until_reset(
    make: Callable[[], Any], play: Callable[[Any], dict[str, Any]], action: Any
) -> None:
    """One documented behaviour: ``EnvStateError`` (PettingZoo's own wrapper only warns); the
    last epoch's info holds the episode's completion rate, as the vector form's does."""
    env = make()
    env.reset(seed=0)
    info = play(env)
    metrics = env.unwrapped.episode_metrics()
    assert info["completion_rate"] == metrics["completion_rate"]
    assert isinstance(info["completed"], np.int64) and "completed_tasks" not in info
    with pytest.raises(EnvStateError, match="after the episode ended"):
        env.step(action)
    env.reset(seed=1)
    env.step(action)  # a new episode steps again


# ---------------------------------------------------------------------------- render modes
@pytest.mark.parametrize(
    "make",
    [
        lambda mode: mara_env.raw_env(config="tiny", render_mode=mode),
        lambda mode: mara_env.parallel_env(config="tiny", render_mode=mode),
        lambda mode: gym.make(mara_env.ENV_ID, config="tiny", render_mode=mode),
    ],
    ids=["aec", "parallel", "gym"],
)
@pytest.mark.parametrize("mode", ["video", "rgb", "", "ANSI"])
def test_unknown_render_mode_raises_config_error(make: Callable[[str], Any], mode: str) -> None:
    """An unknown render_mode raises ConfigError naming it and listing the valid modes."""
    with pytest.raises(ConfigError, match="render_mode") as raised:
        make(mode)
    assert "rgb_array" in str(raised.value)


# ---------------------------------------------------------------------------- trace files
def _valid_arrays(tmp_path: Path) -> dict[str, np.ndarray]:
    """Arrays of a valid trace file (3 synthetic curves, both splits, per-curve metadata)."""
    pool = CurvePool.from_curves(
        "synthetic",
        [np.array([1.0, 0.5, 0.25]), np.array([2.0, 1.0]), np.array([3.0, 2.0, 1.0, 0.5])],
    )
    path = tmp_path / "valid.npz"
    metadata = {"card": "test", "curves": {"synthetic": [{"id": 0}, {"id": 1}, {"id": 2}]}}
    save_traces(path, {"synthetic": (pool, np.array([False, True, False]))}, metadata)
    assert TraceFileSource(path).families == ("synthetic",)
    with np.load(path) as data:
        return {key: data[key] for key in data.files}


def _with(key: str, value: Any) -> Callable[[dict[str, np.ndarray]], None]:
    def change(arrays: dict[str, np.ndarray]) -> None:
        arrays[key] = np.asarray(value)

    return change


def _set_loss(row: int, column: int, value: float) -> Callable[[dict[str, np.ndarray]], None]:
    def change(arrays: dict[str, np.ndarray]) -> None:
        arrays["synthetic.losses"] = arrays["synthetic.losses"].copy()
        arrays["synthetic.losses"][row, column] = value

    return change


def _without(key: str) -> Callable[[dict[str, np.ndarray]], None]:
    def change(arrays: dict[str, np.ndarray]) -> None:
        del arrays[key]

    return change


def _transform(key: str, fn: Callable[[np.ndarray], Any]) -> Callable[[dict[str, Any]], None]:
    def change(arrays: dict[str, np.ndarray]) -> None:
        arrays[key] = np.asarray(fn(arrays[key]))

    return change


def _rename_family(arrays: dict[str, np.ndarray]) -> None:
    arrays["families"] = np.array([" audio"])
    for part in ("losses", "lengths", "is_test"):
        arrays[f" audio.{part}"] = arrays.pop(f"synthetic.{part}")


def _metadata(value: Any) -> Callable[[dict[str, np.ndarray]], None]:
    return _with("metadata", json.dumps(value))


CORRUPTIONS = [
    pytest.param(_set_loss(0, 1, math.nan), "NaN or inf", id="nan_loss"),
    pytest.param(_set_loss(2, 3, math.inf), "NaN or inf", id="inf_loss"),
    pytest.param(_set_loss(2, 0, -math.inf), "NaN or inf", id="minus_inf_loss"),
    pytest.param(_set_loss(0, 2, 0.0), "<= 0", id="zero_loss"),
    pytest.param(_set_loss(1, 0, -0.5), "<= 0", id="negative_loss"),
    pytest.param(
        _transform("synthetic.losses", lambda a: (a * 10).astype(np.int64)),
        "2-d float",
        id="integer_losses",
    ),
    pytest.param(_transform("synthetic.losses", lambda a: a[0]), "2-d float", id="1d_losses"),
    pytest.param(_transform("synthetic.losses", lambda a: a[None]), "2-d float", id="3d_losses"),
    pytest.param(
        _transform("synthetic.lengths", lambda a: a.astype(np.float64)),
        "integer",
        id="float_lengths",
    ),
    pytest.param(_with("synthetic.lengths", [3, 1, 4]), "length must be in", id="length_1"),
    pytest.param(_with("synthetic.lengths", [3, 2, 5]), "length must be in", id="length_too_long"),
    pytest.param(_with("synthetic.lengths", [3, 2]), "one length per curve", id="lengths_short"),
    pytest.param(_without("format_version"), "'format_version'", id="no_format_version"),
    pytest.param(_without("families"), "'families'", id="no_families"),
    pytest.param(_without("metadata"), "'metadata'", id="no_metadata"),
    pytest.param(_without("synthetic.losses"), "'synthetic.losses'", id="no_losses"),
    pytest.param(_without("synthetic.lengths"), "'synthetic.lengths'", id="no_lengths"),
    pytest.param(_without("synthetic.is_test"), "'synthetic.is_test'", id="no_is_test"),
    pytest.param(_with("format_version", 2), "format version 2", id="format_version_2"),
    pytest.param(_with("format_version", 0), "format version 0", id="format_version_0"),
    pytest.param(_with("format_version", "one"), "format", id="format_version_text"),
    pytest.param(_with("format_version", [1, 1]), "format", id="format_version_array"),
    pytest.param(_with("metadata", "{not json"), "not valid JSON", id="metadata_not_json"),
    pytest.param(_metadata([1, 2]), "JSON object", id="metadata_list"),
    pytest.param(
        _metadata({"curves": {"synthetic": [{}, {}]}}),
        "metadata lists 2 curves",
        id="metadata_count_mismatch",
    ),
    pytest.param(_metadata({"curves": ["synthetic"]}), "curves", id="metadata_curves_list"),
    pytest.param(
        _metadata({"curves": {"synthetic": 3}}),
        "synthetic",
        id="metadata_count_int",
    ),
    pytest.param(_with("synthetic.is_test", [True, True, True]), "both sides", id="all_test"),
    pytest.param(_with("synthetic.is_test", [False, False, False]), "both sides", id="all_train"),
    pytest.param(_with("synthetic.is_test", [0, 1, 0]), "boolean", id="integer_is_test"),
    pytest.param(_with("synthetic.is_test", [False, True]), "boolean", id="short_is_test"),
    pytest.param(_rename_family, "non-empty text", id="badly_named_family"),
    pytest.param(
        _with("families", ["synthetic", "vision"]),
        "'vision.losses'",
        id="listed_family_without_arrays",
    ),
]


@pytest.mark.parametrize(("corrupt", "match"), CORRUPTIONS)
def test_corrupt_trace_file_raises_trace_error(
    tmp_path: Path, corrupt: Callable[[dict[str, np.ndarray]], None], match: str
) -> None:
    """A file written by save_traces, then corrupted, raises TraceError naming the file and
    the problem, on first use and when an environment is built on it."""
    arrays = _valid_arrays(tmp_path)
    corrupt(arrays)
    path = tmp_path / "corrupt.npz"
    np.savez(path, **arrays)
    source = TraceFileSource(path)  # lazy: constructing never fails
    with pytest.raises(TraceError, match=re.escape(match)) as raised:
        source.families  # noqa: B018 - the property reads the file
    assert str(path) in str(raised.value)
    with pytest.raises(TraceError, match=re.escape(match)):
        mara_env.raw_env(config="tiny", trace_source=TraceFileSource(path))


@pytest.mark.parametrize(
    ("write", "match"),
    [
        (lambda path, valid: path.write_bytes(valid[: len(valid) // 2]), "not a readable"),
        (lambda path, valid: path.write_bytes(b"garbage" * 50), "not a readable"),
        (lambda path, valid: path.write_bytes(b""), "not a readable"),
        (
            lambda path, valid: np.savez(
                path,
                metadata=np.array([{"a": 1}], dtype=object),
                families=np.array(["synthetic"]),
                format_version=np.array(1),
            ),
            "not a readable",
        ),
        (lambda path, valid: None, "no such file"),
        (lambda path, valid: path.mkdir(), "no such file"),
    ],
    ids=["truncated", "garbage", "empty", "pickled_object", "missing", "directory"],
)
def test_unreadable_trace_file_raises_trace_error(
    tmp_path: Path, write: Callable[[Path, bytes], Any], match: str
) -> None:
    """Truncated, garbage, pickle-bearing, missing or directory paths raise TraceError."""
    _valid_arrays(tmp_path)
    valid = (tmp_path / "valid.npz").read_bytes()
    path = tmp_path / "bad.npz"
    write(path, valid)
    with pytest.raises(TraceError, match=match) as raised:
        TraceFileSource(path).fingerprint  # noqa: B018
    assert str(path) in str(raised.value)


def test_unknown_split_raises_trace_error(tmp_path: Path) -> None:
    """pool() with a split other than train/test raises TraceError naming the split."""
    _valid_arrays(tmp_path)
    for source in (TraceFileSource(tmp_path / "valid.npz"), SyntheticTraceSource(10, 5)):
        with pytest.raises(TraceError, match="validation"):
            source.pool("synthetic", "validation")
    with pytest.raises(TraceError, match="vision"):
        TraceFileSource(tmp_path / "valid.npz").pool("vision", "train")


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: CurvePool.from_curves("", [np.ones(3)]), "non-empty text"),
        (lambda: CurvePool.from_curves("synthetic", []), "no curves"),
        (lambda: CurvePool.from_curves("synthetic", [np.array([1.0])]), ">= 2 points"),
        (lambda: CurvePool.from_curves("synthetic", [np.ones((2, 2))]), "1-d"),
        (lambda: CurvePool.from_curves("synthetic", [np.array([1.0, math.nan])]), "NaN"),
        (lambda: CurvePool.from_curves("synthetic", [np.array([1.0, 0.0])]), "<= 0"),
        # the rule a curve table's runs follow (mara_env.curves.traces.check_falls)
        (
            lambda: CurvePool.from_curves("rl", [np.array([0.2, 0.5, 0.9, 1.0])]),
            "curve 0: the curve rises",
        ),
        (
            lambda: CurvePool.from_curves("rl", [np.array([2.0, 1.0]), np.ones(4)]),
            "curve 1: the curve is flat",
        ),
        (
            lambda: CurvePool("synthetic", np.ones((2, 3)), np.array([3, 3]), np.arange(3)),
            "curve_ids",
        ),
        (lambda: SyntheticTraceSource(n_curves=1), "n_curves"),
        (lambda: SyntheticTraceSource(length=1), "length"),
        (lambda: SyntheticTraceSource(test_share=0.0), "test_share"),
        (lambda: SyntheticTraceSource(test_share=1.0), "test_share"),
        (lambda: SyntheticTraceSource().pool("vision", "train"), "vision"),
    ],
    ids=[
        "unnamed_family",
        "empty",
        "one_point",
        "2d_curve",
        "nan",
        "zero",
        "rising",
        "flat",
        "curve_ids",
        "one_curve",
        "length_1",
        "test_share_0",
        "test_share_1",
        "synthetic_family_only",
    ],
)
def test_invalid_curve_pools_and_sources_raise_trace_error(
    build: Callable[[], Any], match: str
) -> None:
    """In-memory pools and synthetic sources are validated like files."""
    with pytest.raises(TraceError, match=re.escape(match)):
        build()


@pytest.mark.parametrize("call", ["step", "observe", "last", "state", "render", "agent_iter"])
def test_wrapped_aec_env_before_reset_raises_env_state_error(call: str) -> None:
    """mara_env.env (PettingZoo's order-enforcing wrapper) says reset() too, not AssertionError."""
    env = mara_env.env(config="tiny", render_mode="ansi")
    arguments = {"step": (0,), "observe": ("node_0",)}.get(call, ())
    with pytest.raises(EnvStateError, match=rf"{call}\(\) called before reset\(\)"):
        getattr(env, call)(*arguments)
    env.reset(seed=0)
    assert env.observe("node_0")["action_mask"].dtype == "int8"
    assert str(env) == mara_env.ENV_ID


def _one_array(path: Path) -> None:
    with path.open("wb") as handle:
        np.save(handle, np.arange(3))


@pytest.mark.parametrize(
    ("name", "write", "match"),
    [
        (
            "times.csv",
            lambda p: p.write_bytes(b"\xff\xfe\x00t"),
            "not UTF-8 text (byte 0xff at position 0)",
        ),
        ("times.csv", lambda p: p.write_text("when\n1\n"), "needs a 'timestamp' column"),
        (
            "times.npz",
            lambda p: p.write_bytes(b"PK\x03\x04 not a zip"),
            "not a readable .npz arrival trace",
        ),
        (
            "times.npz",
            lambda p: p.write_bytes(b"\x93NUMPY\x01\x00cut"),
            "not a readable .npz arrival trace",
        ),
        ("times.npz", _one_array, "one array, not an arrival trace"),
        (
            "times.npz",
            lambda p: np.savez(p, other=np.arange(3)),
            "it lacks ['counts', 'bin_seconds', 'source']",
        ),
    ],
    ids=["not_utf8", "no_timestamp", "not_zip", "cut_npy", "one_array", "other_arrays"],
)
def test_bad_arrival_files_raise_config_error_naming_the_file(
    tmp_path: Path, name: str, write: Callable[[Path], Any], match: str
) -> None:
    from mara_env.curves.arrivals import load_arrivals

    path = tmp_path / name
    write(path)
    with pytest.raises(ConfigError, match=re.escape(match)) as raised:
        load_arrivals(str(path))
    assert str(path) in str(raised.value)


def test_a_curve_table_that_is_not_utf8_raises_its_error_naming_the_file(tmp_path: Path) -> None:
    from mara_env.curves.curve_tables import CurveTableError, read_curve_table

    path = tmp_path / "curves.csv"
    path.write_bytes("run,step,value,family,split\nr,0,1.0,caf\xe9,train\n".encode("latin-1"))
    with pytest.raises(
        CurveTableError, match=re.escape("not UTF-8 text (byte 0xe9 at position 39)")
    ):
        read_curve_table(path)
