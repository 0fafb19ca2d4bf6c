"""A name the description spells with its words in another order than the code. Pure.

``extra_reward_info`` in a pull request's text for the code's ``reward_extra_info``
(fresh-m #3194) names the same thing as the author recalled it: the description check
(:func:`bot.engine.analysis.description.check_against_diff`) counts it as present.
"""

from __future__ import annotations

import itertools
import re

_SNAKE = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+")


#: Names looked for order by order (23 scans of the patches each); past them, the patches'
#: snake_case names are read once (200 names × 23 scans of 4 MB took seconds).
_ORDER_SCANS = 8
#: A snake_case name of three or four words standing alone, as :func:`reordered` finds one.
_SNAKE_3_4 = re.compile(r"(?<!\w)[A-Za-z0-9]+(?:_[A-Za-z0-9]+){2,3}(?!\w)")


def reordered(ident: str, texts: str, orders: list[int | set[tuple[str, ...]]] | None = None) -> bool:
    """True when the patches hold a snake_case name of the same three or four words as
    ``ident`` in another order (the description's ``extra_reward_info`` for the code's
    ``reward_extra_info``, fresh-m #3194): the same thing, named as the author recalled it.
    Each other order is looked for as a whole name (a C-speed scan per order) for the first
    :data:`_ORDER_SCANS` names of one description (``orders`` counts them, then holds the
    patches' names by sorted words)."""
    words = ident.split("_")
    if not 3 <= len(words) <= 4 or not _SNAKE.fullmatch(ident):
        return False
    if orders is not None:
        if isinstance(orders[0], int) and orders[0] >= _ORDER_SCANS:
            orders[0] = {tuple(sorted(name.split("_"))) for name in _SNAKE_3_4.findall(texts)}
        if isinstance(orders[0], set):
            # Asked only when ``ident`` is nowhere in the patches: a name of its words is another order.
            return tuple(sorted(words)) in orders[0]
        orders[0] += 1
    for order in itertools.permutations(words):
        name = "_".join(order)
        if name == ident:
            continue
        at = texts.find(name)
        while at >= 0:
            before = texts[at - 1] if at else " "
            after = texts[at + len(name) : at + len(name) + 1] or " "
            if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
                return True
            at = texts.find(name, at + 1)
    return False
