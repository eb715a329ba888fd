"""Agreement statistics for the quality dashboard: tier kappa and alpha, confusion counts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Literal

import numpy as np

from pairdiff.agreement import TIERS


def confusion(pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], int]:
    """How often each (first, second) pair occurs, e.g. categories of matched changes.

    Only pairs that occur are keys; keys are sorted so tables render in a stable order.
    """
    return dict(sorted(Counter((a, b) for a, b in pairs).items()))


def weighted_kappa(
    pairs: Sequence[tuple[str, str]],
    categories: Sequence[str] = TIERS,
    weights: Literal["quadratic", "linear"] = "quadratic",
) -> float | None:
    """Cohen's weighted kappa of two raters: 1 − Σ w·observed / Σ w·expected.

    Weights use the positions in ``categories`` (an ordinal scale): w = |i − j| / (k − 1),
    squared for "quadratic"; expected is the outer product of the two raters' marginals.
    None when kappa is undefined: no pairs, fewer than two categories, or Σ w·expected = 0,
    which happens exactly when both raters always gave one and the same value (no variance).
    ValueError for a value outside ``categories`` or unknown ``weights``.
    """
    if weights not in ("quadratic", "linear"):
        raise ValueError(f"weights {weights!r}: choose quadratic or linear")
    k = len(categories)
    position = {c: i for i, c in enumerate(categories)}
    if not pairs or k < 2:
        return None
    observed = np.zeros((k, k))
    for a, b in pairs:
        observed[_position(position, a), _position(position, b)] += 1
    observed /= observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    steps = np.arange(k)
    w = np.abs(np.subtract.outer(steps, steps)) / (k - 1)
    if weights == "quadratic":
        w = w**2
    disagreement_expected = float((w * expected).sum())
    if disagreement_expected == 0:
        return None
    return 1.0 - float((w * observed).sum()) / disagreement_expected


def krippendorff_alpha_ordinal(
    units: Sequence[Sequence[str | None]], categories: Sequence[str] = TIERS
) -> float | None:
    """Krippendorff's alpha with the ordinal metric; ``categories`` in rank order.

    Each unit holds the values its raters gave; None marks a missing value, and units with
    fewer than two values are left out (they cannot be paired). From the coincidence matrix
    o and its marginals n_c: δ²(c, k) = (Σ_{g=c..k} n_g − (n_c + n_k) / 2)², and
    α = 1 − (n − 1) · Σ o·δ² / Σ n_c·n_k·δ². None when no unit is pairable or only one value
    occurs (expected disagreement 0). ValueError for a value outside ``categories``.
    """
    k = len(categories)
    position = {c: i for i, c in enumerate(categories)}
    coincidence = np.zeros((k, k))
    for unit in units:
        values = [_position(position, v) for v in unit if v is not None]
        if len(values) < 2:
            continue
        counts = np.bincount(values, minlength=k).astype(float)
        coincidence += (np.outer(counts, counts) - np.diag(counts)) / (len(values) - 1)
    marginals = coincidence.sum(axis=1)
    n = marginals.sum()
    if n == 0:
        return None
    cumulative = np.concatenate(([0.0], np.cumsum(marginals)))
    lo = np.minimum.outer(np.arange(k), np.arange(k))
    hi = np.maximum.outer(np.arange(k), np.arange(k))
    between = cumulative[hi + 1] - cumulative[lo]  # Σ n_g for g from lo to hi
    delta = (between - (marginals[lo] + marginals[hi]) / 2) ** 2
    expected = float((np.outer(marginals, marginals) * delta).sum())
    if expected == 0:
        return None
    return 1.0 - (n - 1) * float((coincidence * delta).sum()) / expected


def _position(position: dict[str, int], value: str) -> int:
    if value not in position:
        raise ValueError(f"{value!r} is not one of {', '.join(position)}")
    return position[value]
