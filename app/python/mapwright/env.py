"""A Gymnasium-style environment over mapping decisions, in pure Python.

An episode builds one mapping of a map space decision by decision: each step
chooses the value of the next element of the space's encoding (where a prime
factor goes, a loop's rank in its level's order, keep or bypass), so a policy
sees the partial mapping and the choice it is making. The last step evaluates
the mapping; its reward is -log(objective) (EDP by default), or
`invalid_reward` when the mapping overflows a buffer or a fan-out. Earlier steps
reward 0.

Gymnasium is not needed: when it is installed the class is a gymnasium.Env
with Discrete and Box spaces; otherwise small stand-ins with the same
attributes (n, shape, sample) take their place.
"""

import math

import numpy as np

try:  # optional
    import gymnasium as _gym
    from gymnasium import spaces as _spaces

    _Base = _gym.Env
except ImportError:  # pragma: no cover - exercised where gymnasium is absent
    _gym = None
    _spaces = None
    _Base = object


class _Discrete:
    """Gymnasium's Discrete(n), for use without gymnasium."""

    def __init__(self, n, seed=None):
        self.n = int(n)
        self._rng = np.random.default_rng(seed)

    def sample(self, mask=None):
        if mask is not None:
            return int(self._rng.choice(np.flatnonzero(mask)))
        return int(self._rng.integers(self.n))

    def contains(self, x):
        return 0 <= int(x) < self.n


class _Box:
    """Gymnasium's Box(low, high, shape, dtype), for use without gymnasium."""

    def __init__(self, low, high, shape, dtype):
        self.low, self.high, self.shape, self.dtype = low, high, shape, dtype


class MappingEnv(_Base):
    """reset() and step(action) over the decisions of one mapping.

    Observation: the encoding so far (undecided elements -1) followed by the
    index of the element being decided. Action: its value; the action space
    is Discrete(largest bound), and info["action_mask"] says which values the
    current element takes (an action beyond them is taken modulo its bound).
    """

    metadata = {"render_modes": []}

    def __init__(self, space, objective="edp", invalid_reward=None):
        super().__init__()
        # Checked here rather than at the end of the first episode.
        if objective not in ("edp", "energy", "cycles"):
            raise ValueError(f"objective: is '{objective}'; expected edp, energy or cycles")
        self.space = space
        self.objective = objective
        self.bounds = np.asarray(space.encoding_bounds, dtype=np.int64)
        self.names = list(space.encoding_names)
        size = len(self.bounds)
        if size == 0:
            raise ValueError("space: has no decisions to make (every choice fixed by constraints)")
        largest = int(self.bounds.max())
        if _spaces is not None:
            self.action_space = _spaces.Discrete(largest)
            self.observation_space = _spaces.Box(-1, max(largest, size), (size + 1,), np.int64)
        else:
            self.action_space = _Discrete(largest)
            self.observation_space = _Box(-1, max(largest, size), (size + 1,), np.int64)
        if invalid_reward is None:
            # Worse than the mapping that keeps everything at the outermost level.
            trivial = space.evaluate(space.trivial())
            invalid_reward = -math.log(self._objective_of(trivial)) - 1.0 if trivial["valid"] else -100.0
        self.invalid_reward = float(invalid_reward)
        if not math.isfinite(self.invalid_reward):
            raise ValueError(f"invalid_reward: is {invalid_reward}; expected a finite number")
        self._vector = np.full(size, -1, dtype=np.int64)
        self._step = 0

    def _objective_of(self, evaluation):
        if self.objective == "edp":
            return evaluation["edp"]
        if self.objective == "energy":
            return evaluation["energy_pJ"]
        if self.objective == "cycles":
            return float(evaluation["cycles"])
        raise ValueError(f"objective: is '{self.objective}'; expected edp, energy or cycles")

    def _observation(self):
        return np.append(self._vector, self._step)

    def _mask(self):
        mask = np.zeros(self.action_space.n, dtype=np.int8)
        if self._step < len(self.bounds):
            mask[: self.bounds[self._step]] = 1
        return mask

    def reset(self, *, seed=None, options=None):
        if _gym is not None:
            super().reset(seed=seed)
        self._vector[:] = -1
        self._step = 0
        return self._observation(), {"action_mask": self._mask(), "decision": self.names[0]}

    def step(self, action):
        if self._step >= len(self.bounds):
            raise RuntimeError("step() after the episode ended; call reset()")
        self._vector[self._step] = int(action) % int(self.bounds[self._step])
        self._step += 1
        if self._step < len(self.bounds):
            info = {"action_mask": self._mask(), "decision": self.names[self._step]}
            return self._observation(), 0.0, False, False, info
        mapping = self.space.decode(self._vector)
        evaluation = self.space.evaluate(mapping)
        reward = -math.log(self._objective_of(evaluation)) if evaluation["valid"] else self.invalid_reward
        info = {"mapping": mapping, "evaluation": evaluation, "action_mask": self._mask()}
        return self._observation(), reward, True, False, info
