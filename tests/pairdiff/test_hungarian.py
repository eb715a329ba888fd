import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from pairdiff.hungarian import best_assignment


@pytest.mark.parametrize("shape", [(1, 1), (1, 4), (4, 1), (3, 3), (2, 5), (5, 2), (7, 7)])
@pytest.mark.parametrize("ties", [False, True])
def test_the_total_is_as_high_as_scipys(shape: tuple[int, int], ties: bool) -> None:
    rng = np.random.default_rng(sum(shape) + ties)
    for _ in range(200):
        scores = rng.integers(0, 3, size=shape) * 1.0 if ties else rng.random(shape)
        rows, cols = best_assignment(scores)
        best_rows, best_cols = linear_sum_assignment(scores, maximize=True)

        assert scores[rows, cols].sum() == pytest.approx(scores[best_rows, best_cols].sum())
        assert len(rows) == min(shape)
        assert rows == sorted(set(rows))
        assert len(set(cols)) == len(cols)


def test_the_best_pairs_are_found_not_the_greedy_ones() -> None:
    # Greedy takes 0.9 and strands the other row at 0.1: the best total is 0.8 + 0.8.
    assert best_assignment([[0.9, 0.8], [0.8, 0.1]]) == ([0, 1], [1, 0])


def test_an_empty_table_matches_nothing() -> None:
    assert best_assignment(np.zeros((0, 3))) == ([], [])


@pytest.mark.parametrize("bad", [[1.0, 2.0], [[np.nan, 1.0]], [[np.inf]]])
def test_a_table_that_is_not_a_finite_matrix_is_refused(bad) -> None:
    with pytest.raises(ValueError):
        best_assignment(bad)
