"""The guide engine: one pure pipeline from a pull request's data to its reading guide.

The stages, in the order data flows through them (each imports only those before it):

1. :mod:`.snapshot` -- the pull request as data (from the API, a bundle or a git clone);
2. :mod:`.analysis` -- what the diff says: files, definitions, config keys, behaviour facts;
3. :mod:`.rules` -- the YAML rule files and their evaluation into rule hits;
4. :mod:`.classify` -- labels, change type, breaking claims, importance and reading level;
5. :mod:`.focus` -- the points a reader should open, review threads, follow-ups;
6. :mod:`.render` -- the guide's Markdown in English or Chinese;

:mod:`.build` runs them (:func:`bot.engine.build.build_guide`); :mod:`.marker` reads and
writes the state a guide comment carries; :mod:`.repo_config` parses a repository's
``.github/prguide.yml``. Nothing here does I/O or imports ``aiohttp``, ``gidgethub`` or
:mod:`bot.app`. This file imports nothing, so importing one stage never runs another.
"""
