"""prguide: a reading guide and labels for every merged pull request."""

__version__ = "0.1.0"

#: Bumped when the guide's machine-readable marker changes shape.
ENGINE_VERSION = "1"
