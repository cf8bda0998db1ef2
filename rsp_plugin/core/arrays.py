"""Small numpy helpers shared by the columnar engine and the reasoners.

>>> unique_sorted(np.array([3, 1, 3, 2])).tolist()
[1, 2, 3]
"""

from __future__ import annotations

import numpy as np


def unique_sorted(values: np.ndarray) -> np.ndarray:
    """The sorted distinct values of a 1-D array: `np.unique(values)`, by a sort. numpy 2.3+'s
    `unique` imports `numpy.ma` at its first call (~10 ms of a process's CPU) to ask whether the
    array is masked; ours never are."""
    ordered = np.sort(values)
    if len(ordered) < 2:
        return ordered
    keep = np.empty(len(ordered), dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]
