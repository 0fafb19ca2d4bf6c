"""How long a pull request takes to read: weighted changed lines and behaviour facts,
``1 + sqrt(weight)`` minutes. Pure; read by :mod:`bot.engine.classify`."""

from __future__ import annotations

import math
from collections.abc import Mapping

from bot.engine.analysis.model import DiffAnalysis

#: Past three hours a number stops helping; the guide says "deep read" anyway.
MAX_READING_MINUTES = 180
#: How much one changed line weighs in reading time, by the kind of its file.
LINE_WEIGHTS: Mapping[str, float] = {
    "source": 1.5,
    "config": 0.4,
    "build": 0.4,
    "example": 0.15,
    "test": 0.1,
    "docs": 0.1,
    "ci": 0.1,
}
#: A behaviour fact weighs like this many source lines: the reader must stop and check it.
FACT_WEIGHT = 10
#: Behaviour facts of one file that add reading time; more are read as one block.
MAX_FACTS_PER_FILE = 8


def reading_weight(analysis: DiffAnalysis) -> float:
    """The weighted lines a reader must read: changed lines by :data:`LINE_WEIGHTS`
    (files removed whole, generated, lock and binary files weigh nothing) plus
    :data:`FACT_WEIGHT` per behaviour fact of a source or config file."""
    total = 0.0
    for f in analysis.files:
        if f.status == "removed":
            continue
        total += LINE_WEIGHTS.get(f.kind, 0.0) * f.changes
        if f.kind in ("source", "config"):
            # Past a handful, facts of one file are read together (a block of removed keys).
            total += FACT_WEIGHT * min(len(f.behaviour), MAX_FACTS_PER_FILE)
    return total


def reading_minutes(analysis: DiffAnalysis) -> int:
    """Minutes to read the change: ``1 + sqrt(reading_weight)``, rounded, at most
    :data:`MAX_READING_MINUTES`.

    The square root is how reading scales: the first ten lines of a fix cost the
    reader the context around them; the thousandth line of a new module is read
    faster than the first. 10 source lines read in ~5 minutes, 300 in ~22, 2,000 in ~56.
    """
    minutes = 1 + math.sqrt(reading_weight(analysis))
    return max(1, min(MAX_READING_MINUTES, math.floor(minutes + 0.5)))
