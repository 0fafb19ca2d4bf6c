"""What a reader should look at: focus points, review highlights and follow-ups.

Pure. Like :mod:`bot.engine.classify`, sentences are message keys and parameters, except
rule-written focus notes, which arrive already written in each language.

Focus points are ranked by meaning: behaviour and breaking facts first (a changed
default, a removed key, a renamed function, a new hard error, a raised dependency
floor); then the symbols that carry the change (where those facts are, what the title
and description name, what the added tests exercise); then rule notes and new public
API; then the largest remaining changes and tests. Environment variables read or set
(:mod:`bot.engine.analysis.envvars`) make one point per variable however many files hold it.
Housekeeping -- generated and lock files, CI image bumps, CODEOWNERS, formatting- or
comment-only files -- is never a numbered point: :func:`housekeeping` sums it up in
one line. At most :data:`MAX_FOCUS` points, at most two per file.

A reason states a meaning only with evidence: "compatibility" only for import
fallbacks and version checks, "config key" only for keys of config files or of
classes the rules mark as configuration, "entry point" only for a new symbol the
diff calls or registers; otherwise plain words ("new function `x`").

The package, by stage: :mod:`.model` (the shapes), :mod:`.points` (ranking the points),
:mod:`.names` (names a description or a file brings in), :mod:`.housekeeping` (what a
reader may skip), :mod:`.review` (review threads and follow-ups). Import from the
module that defines a name: this file imports nothing, so no stage depends on another
through it.
"""
