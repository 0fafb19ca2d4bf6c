"""Definitions a pull request renames: the analysis's own renames, and a public definition
removed where one of the same kind is added under a name ending in the same words.

Pure: reads :class:`~bot.engine.analysis.model.FileAnalysis`, does no I/O. Classification
(breaking changes) and the focus points both read :func:`rename_map`, computed once per guide.
"""

from __future__ import annotations

from collections import defaultdict

from bot.engine.analysis.model import Definition, DiffAnalysis, FileAnalysis
from bot.engine.focus.names import short_name


def rename_map(analysis: DiffAnalysis) -> dict[str, tuple[tuple[str, str], ...]]:
    """:func:`renamed_pairs` of every source or example file that has any, by path.

    Computed once per guide (classification and focus points both use it)."""
    out = {}
    for f in analysis.files:
        if f.kind in ("source", "example") and ((f.definitions_removed and f.definitions_added) or f.renamed):
            pairs = renamed_pairs(f)
            if pairs:
                out[f.path] = pairs
    return out


def renamed_pairs(f: FileAnalysis) -> tuple[tuple[str, str], ...]:
    """``(old, new)`` names of definitions ``f`` renames: those the analysis found, and a
    public definition removed where one of the same kind is added whose name shares its
    last two words or more (``clear_rocm_attention_weight_caches`` ->
    ``refresh_rocm_attention_weight_caches``), one pair per name."""
    pairs = list(f.renamed)
    if f.definitions_removed and f.definitions_added and f.status != "removed":
        removed_tails = {_tail2(d.name) for d in f.definitions_removed if "_" in d.name}
        if not removed_tails.intersection(_tail2(d.name) for d in f.definitions_added if "_" in d.name):
            return tuple(pairs)
        taken = {n for pair in pairs for n in pair}
        # Candidates are indexed by their last two words, so a file is read once.
        by_tail: dict[tuple[str, ...], list[Definition]] = defaultdict(list)
        for d in f.definitions_added:
            if d.name not in taken and "_" in d.name and d.public:
                by_tail[tuple(short_name(d.name).lower().rsplit("_", 2)[-2:])].append(d)
        if by_tail:
            for old in f.definitions_removed:
                if old.name in taken or "_" not in old.name or not old.public:
                    continue
                tail = tuple(short_name(old.name).lower().rsplit("_", 2)[-2:])
                matches = [d for d in by_tail.get(tail, ()) if d.kind == old.kind and d.name not in taken and _shared_tail(old.name, d.name)
                           and not _accessor_of(old.name, d.name)]  # fmt: skip
                if len(matches) == 1:
                    pairs.append((old.name, matches[0].name))
                    taken.update((old.name, matches[0].name))
    return tuple(pairs)


def _tail2(name: str) -> tuple[str, ...]:
    return tuple(name[name.rfind(".") + 1 :].lower().rsplit("_", 2)[-2:])


def _shared_tail(a: str, b: str) -> bool:
    """True when two names end in the same two or more ``_`` words, covering most of each."""
    wa, wb = short_name(a).lower().split("_"), short_name(b).lower().split("_")
    shared = 0
    while shared < min(len(wa), len(wb)) and wa[-1 - shared] == wb[-1 - shared]:
        shared += 1
    return shared >= 2 and shared * 2 > max(len(wa), len(wb)) - 1 and a != b


#: Verbs that make an accessor of a name: ``set_loss_fn`` sets ``loss_fn``, it is not it renamed.
_ACCESSOR_VERBS = frozenset({"set", "get", "is", "has", "make", "build", "create", "init", "reset", "update", "with"})


def _accessor_of(old: str, new: str) -> bool:
    """True when ``new`` is an accessor verb put before the whole of ``old`` (``loss_fn`` ->
    ``set_loss_fn``, fresh-l #3439): a new method beside what went, not the same one renamed."""
    old_short, new_short = short_name(old), short_name(new)
    verb, _, rest = new_short.partition("_")
    return rest == old_short and verb.lower() in _ACCESSOR_VERBS
