"""The optional narrator: the engine's facts said in a colleague's words, grounded.

Off by default. The engine's guide data becomes a fact sheet (:mod:`.facts`), which is
packed into a prompt within a token budget (:mod:`.prompt`); the model's JSON answer
(:mod:`.client`, any OpenAI-compatible server) is checked sentence by sentence
(:mod:`.validate`) and only grounded sentences reach the comment, with every name filled
in from the fact sheet (:mod:`.render`). Narrations are cached (:mod:`.store`).

This package imports neither aiohttp, gidgethub nor :mod:`bot.app`.
"""
