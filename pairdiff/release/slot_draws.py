"""Seeded draws of a slot's values in proportion to how often the release's truths use them
(``slots.candidates``): the order is drawn at once and sorted only as far as it is read."""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping

import numpy as np


def weighted_order(
    counts: Mapping[str, int], rng: random.Random, *, leave_out: str = ""
) -> Iterator[str]:
    """Values (but ``leave_out``) in a seeded order where a value used n times is n times as
    likely to come first (Efraimidis–Spirakis keys u ** (1/n), one ``rng.random()`` per value
    in sorted order, largest key first). The draws are taken now, so ``rng`` moves on as if
    each were made; the order is sorted only as far as it is read — a prior of thousands of
    values is read for its first few, once per slot of every question."""
    values, weights, position = _sorted_prior(counts)
    if len(values) <= _SMALL_PRIOR:
        return _weighted_order_small(values, weights, position, rng, leave_out)
    keep = np.ones(len(values), dtype=bool)
    if leave_out in position:
        keep[position[leave_out]] = False
    at = np.flatnonzero(keep)
    keys = draws(rng, len(at))
    heavy = np.flatnonzero(weights[at] > 1)
    if len(heavy):  # Python's own pow, as u ** (1 / n) always gave (numpy's may differ by an ulp)
        pairs = zip(keys[heavy], weights[at][heavy], strict=True)
        keys[heavy] = [float(u) ** (1 / int(n)) for u, n in pairs]
    return _largest_first(keys, at, values)


_SMALL_PRIOR = 64  # values below which plain Python orders a prior faster than numpy


def _weighted_order_small(
    values: list[str],
    weights: np.ndarray,
    position: Mapping[str, int],
    rng: random.Random,
    leave_out: str,
) -> Iterator[str]:
    """``_weighted_order`` of a small prior in plain Python: the same draws (one
    ``rng.random()`` per value kept, in sorted order), the same keys, the same order."""
    skip = position.get(leave_out, -1)
    at = [i for i in range(len(values)) if i != skip]
    keys = [rng.random() for _ in at]
    for k, i in enumerate(at):
        n = int(weights[i])
        if n > 1:
            keys[k] = keys[k] ** (1 / n)
    order = sorted(range(len(at)), key=lambda k: (-keys[k], -at[k]))
    return iter([values[at[k]] for k in order])


def _largest_first(keys: np.ndarray, at: np.ndarray, values: list[str]) -> Iterator[str]:
    """``values[at[i]]`` by key, largest first; equal keys, the later value first."""
    head = min(len(keys), 32)
    if head == 0:
        return
    cut = np.partition(keys, len(keys) - head)[len(keys) - head]
    for part in (keys >= cut, keys < cut):
        chosen = np.flatnonzero(part)
        for i in chosen[np.lexsort((-at[chosen], -keys[chosen]))]:
            yield values[at[i]]


# Below this many draws Python's own generator is faster (about 40 ns a draw) than copying its
# state into numpy's and back (about 1.5 ms: a new RandomState seeds itself from the OS).
DRAWS_IN_PYTHON = 20_000


def draws(rng: random.Random, n: int) -> np.ndarray:
    """``n`` calls of ``rng.random()`` at once: numpy's MT19937 from the same state gives the
    same doubles, and ``rng`` is moved on past them."""
    if n < DRAWS_IN_PYTHON:  # copying the generator's state costs more than these draws
        return np.array([rng.random() for _ in range(n)], dtype=np.float64)
    version, state, gauss = rng.getstate()
    twister = np.random.RandomState()
    twister.set_state(("MT19937", np.array(state[:-1], dtype=np.uint32), int(state[-1]), 0, 0.0))
    out = twister.random_sample(n)
    after = twister.get_state(legacy=True)
    assert isinstance(after, tuple)  # legacy=True: (name, key, pos, has_gauss, gauss)
    rng.setstate((version, (*after[1].tolist(), int(after[2])), gauss))
    return out


_PRIORS: dict[int, tuple[Mapping, tuple]] = {}


def _sorted_prior(counts: Mapping[str, int]) -> tuple[list[str], np.ndarray, dict[str, int]]:
    """The prior's values sorted, their counts, and each value's place: made once per prior
    (kept for the few priors of the build in hand)."""
    entry = _PRIORS.get(id(counts))
    if entry is not None and entry[0] is counts and len(entry[1][0]) == len(counts):
        return entry[1]
    values = sorted(counts)
    table = (
        values,
        np.array([counts[v] for v in values], dtype=np.int64),
        {v: i for i, v in enumerate(values)},
    )
    if len(_PRIORS) >= 16:
        _PRIORS.clear()
    _PRIORS[id(counts)] = (counts, table)
    return table
