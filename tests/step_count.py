"""Count the Python line events one module runs while a function runs: a step count that
does not move with the machine's load, for tests that bound work (never a time)."""

from __future__ import annotations

import sys
from collections.abc import Callable


def line_events(module_file: str, fn: Callable[[], object]) -> int:
    """Line events executed in the module whose ``__file__`` is ``module_file`` while ``fn()``
    runs. The tracer in place before (coverage's, under pytest-cov) comes back afterwards:
    clearing it would stop coverage for every later test of the worker."""
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        if frame.f_code.co_filename != module_file:
            return None
        if event == "line":
            count += 1
        return tracer

    before = sys.gettrace()
    sys.settrace(tracer)
    try:
        fn()
    finally:
        sys.settrace(before)
    return count
