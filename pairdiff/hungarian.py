"""The best one-to-one matching of two lists by a score table (the Hungarian method).

The tables matched here are small (the changes of two annotations, the boxes of one side), so
the method runs in plain Python: SciPy's ``linear_sum_assignment`` gives the same totals, but
importing ``scipy.optimize`` adds about 30 MiB to every web process that cross-checks a pair in
the request (issue #17's memory goal). It is O(n²·m) for n ≤ m, a few milliseconds at 20×20.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def best_assignment(scores: np.ndarray | Sequence[Sequence[float]]) -> tuple[list[int], list[int]]:
    """Rows and columns of a matching with the highest total score: ``min(n_rows, n_cols)``
    pairs, rows in ascending order."""
    table = np.asarray(scores, dtype=float)
    if table.ndim != 2:
        raise ValueError(f"scores must be a 2-D table, not {table.ndim}-D")
    if not np.isfinite(table).all():
        raise ValueError("scores must be finite")
    n_rows, n_cols = table.shape
    if n_rows == 0 or n_cols == 0:
        return [], []
    if n_rows == 1:  # the common case: one change, one box
        return [0], [int(np.argmax(table[0]))]
    if n_cols == 1:
        return [int(np.argmax(table[:, 0]))], [0]
    if n_rows <= n_cols:
        cols = _min_cost_columns((-table).tolist())
        return list(range(n_rows)), cols
    rows_of_cols = _min_cost_columns((-table.T).tolist())
    pairs = sorted(zip(rows_of_cols, range(n_cols), strict=True))
    return [i for i, _ in pairs], [j for _, j in pairs]


def _min_cost_columns(cost: list[list[float]]) -> list[int]:
    """For each row of an n×m cost table (n ≤ m), its column in a minimum-cost matching.

    Shortest augmenting paths with row and column potentials (Kuhn–Munkres as Jonker and
    Volgenant state it): each row joins in turn, and the path to a free column is found in
    O(n·m) by keeping, per column, its least reduced cost seen so far.
    """
    n, m = len(cost), len(cost[0])
    inf = float("inf")
    u = [0.0] * (n + 1)  # row potentials, 1-based
    v = [0.0] * (m + 1)  # column potentials; column 0 is the path's virtual start
    row_of = [0] * (m + 1)  # the row matched to each column (0: free)
    way = [0] * (m + 1)  # the previous column on the shortest path
    for i in range(1, n + 1):
        row_of[0] = i
        j0 = 0
        least = [inf] * (m + 1)
        used = [False] * (m + 1)
        while True:
            used[j0] = True
            i0 = row_of[j0]
            delta, j1 = inf, 0
            costs = cost[i0 - 1]
            for j in range(1, m + 1):
                if used[j]:
                    continue
                reduced = costs[j - 1] - u[i0] - v[j]
                if reduced < least[j]:
                    least[j], way[j] = reduced, j0
                if least[j] < delta:
                    delta, j1 = least[j], j
            for j in range(m + 1):
                if used[j]:
                    u[row_of[j]] += delta
                    v[j] -= delta
                else:
                    least[j] -= delta
            j0 = j1
            if row_of[j0] == 0:
                break
        while j0:  # flip the path: every column on it takes the row before it
            j1 = way[j0]
            row_of[j0] = row_of[j1]
            j0 = j1
    column = [0] * n
    for j in range(1, m + 1):
        if row_of[j]:
            column[row_of[j] - 1] = j - 1
    return column
