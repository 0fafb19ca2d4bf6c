"""The guide template compiled by Jinja ahead of time, so a process does not compile it at its first guide.

Jinja turns ``templates/guide.md.j2`` into Python code when it first loads it: about
80 million machine instructions, as much as a dozen small guides. :mod:`bot.engine.render.guide_compiled`
holds that code, written by this module, with the template's SHA-256 and the Jinja
version it came from; :func:`load` uses it only when both still match, and otherwise
lets Jinja compile the template as before (so an edited template is never rendered
from stale code). ``tests/test_render.py`` checks the file is up to date.

    python -m bot.engine.render.precompile          # rewrite guide_compiled.py
    python -m bot.engine.render.precompile --check  # exit 1 when it is out of date
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import jinja2

#: The template's name under ``bot/engine/render/templates``.
TEMPLATE = "guide.md.j2"
#: The generated module.
COMPILED_PATH = Path(__file__).resolve().parent / "guide_compiled.py"


def environment() -> jinja2.Environment:
    """The Jinja environment the guide is rendered in (its options shape the compiled code)."""
    return jinja2.Environment(
        loader=jinja2.PackageLoader("bot.engine.render", "templates"),
        autoescape=False,  # Markdown, not HTML: PR text is neutralised by bot.engine.render.sanitize instead
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )


def _digest(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def generated(env: jinja2.Environment | None = None) -> str:
    """The text of ``guide_compiled.py`` for the template as it is now."""
    env = env or environment()
    source, filename, _uptodate = env.loader.get_source(env, TEMPLATE)  # type: ignore[union-attr]
    code = env.compile(source, TEMPLATE, filename, raw=True, defer_init=True)
    return (
        f'"""{TEMPLATE} compiled by Jinja {jinja2.__version__}: written by '
        "``python -m bot.engine.render.precompile``, do not edit.\"\"\"\n"
        "# fmt: off\n# ruff: noqa\n"
        f"SOURCE_SHA256 = {_digest(source)!r}\nJINJA_VERSION = {jinja2.__version__!r}\n{code}\n"
    )


def load(env: jinja2.Environment) -> jinja2.Template:
    """The guide template in ``env``: from the compiled module when it matches the template
    and the installed Jinja, else compiled by Jinja now.

    As with Jinja's ``ModuleLoader``, the compiled module renders with the environment it
    was last loaded into: callers pass :func:`environment`, so every one is alike.
    """
    source, _filename, _uptodate = env.loader.get_source(env, TEMPLATE)  # type: ignore[union-attr]
    try:
        from bot.engine.render import guide_compiled as compiled
    except ImportError:  # pragma: no cover - only while the file is being regenerated
        compiled = None
    if compiled is not None and compiled.SOURCE_SHA256 == _digest(source) and compiled.JINJA_VERSION == jinja2.__version__:
        return env.template_class.from_module_dict(env, vars(compiled), env.make_globals(None))
    return env.get_template(TEMPLATE)


def main(argv: list[str] | None = None) -> int:
    """Write (or with ``--check`` compare) ``guide_compiled.py``; exit status 1 when it is stale."""
    args = sys.argv[1:] if argv is None else argv
    text = generated()
    if args == ["--check"]:
        current = COMPILED_PATH.read_text(encoding="utf-8") if COMPILED_PATH.exists() else ""
        if current != text:
            print(f"{COMPILED_PATH.name} is out of date: run python -m bot.engine.render.precompile", file=sys.stderr)
            return 1
        return 0
    if args:
        print("usage: python -m bot.engine.render.precompile [--check]", file=sys.stderr)
        return 2
    COMPILED_PATH.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
