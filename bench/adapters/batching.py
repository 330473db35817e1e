"""How inputs are cut into batches: one function, shared by the encoder and the distributed pipeline (which
must form exactly the batches a one-process run forms, and may not import the encoder base: a circle)."""

from __future__ import annotations

from collections.abc import Sequence


def plan_batches(lengths: Sequence[int], batch_size: int, max_tokens: int | None = None) -> list[int]:
    """Sizes of consecutive batches: at most `batch_size` rows and, with a budget, at most
    `max_tokens` padded tokens (rows x longest row; a row longer than the budget goes alone)."""
    sizes: list[int] = []
    start = 0
    while start < len(lengths):
        stop, longest = start, 0
        while stop < len(lengths) and stop - start < batch_size:
            longest_if_added = max(longest, lengths[stop])
            if max_tokens is not None and stop > start and (stop - start + 1) * longest_if_added > max_tokens:
                break
            longest = longest_if_added
            stop += 1
        sizes.append(stop - start)
        start = stop
    return sizes
