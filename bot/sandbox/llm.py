"""A local, scripted OpenAI-compatible model server, for testing the narrator.

Serves ``POST /v1/chat/completions`` (and ``GET /v1/models``) on loopback. Each request
takes the next scripted answer::

    async with ScriptedModel([Reply.json({"summary": ...}), Reply.status(429)]) as model:
        config = LLMConfig(url=model.base_url, model="test-model", api_key="sk-test")
        ...
        assert len(model.requests) == 2

A :class:`Reply` is content (the assistant message), an HTTP error status, or a hang
(the answer never comes, until the server stops: the client's time-out decides, so no
test sleeps). ``schema=False`` makes the server refuse ``response_format`` JSON schemas
with 400, like servers that only know ``json_object``. When the script is used up the
server answers 500.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted answer: ``content`` text, or an error ``status``, or ``hang``."""

    content: str | None = None
    status: int = 200
    hang: bool = False
    usage: tuple[int, int] = (120, 40)

    @classmethod
    def json(cls, data: Any) -> Reply:
        """An answer whose content is ``data`` as JSON."""
        return cls(content=json.dumps(data, ensure_ascii=False))

    @classmethod
    def error(cls, status: int) -> Reply:
        """An HTTP error answer (429, 500...)."""
        return cls(status=status)


@dataclass
class ScriptedModel:
    """The server; ``requests`` records each request's JSON body and ``Authorization`` header."""

    script: list[Reply]
    schema: bool = True
    model: str = "test-model"
    requests: list[dict[str, Any]] = field(default_factory=list)
    authorizations: list[str] = field(default_factory=list)
    base_url: str = ""
    _runner: web.AppRunner | None = None
    _release: asyncio.Event | None = None

    async def __aenter__(self) -> ScriptedModel:
        self._release = asyncio.Event()
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._release is not None and self._runner is not None
        self._release.set()
        await self._runner.cleanup()

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": self.model, "object": "model", "owned_by": "sandbox"}]})

    async def _chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        self.authorizations.append(request.headers.get("Authorization", ""))
        fmt = (body.get("response_format") or {}).get("type")
        if fmt == "json_schema" and not self.schema:
            return web.json_response({"error": {"message": "response_format json_schema is not supported", "type": "invalid_request_error"}}, status=400)
        if not self.script:
            return web.json_response({"error": {"message": "no scripted answer left", "type": "server_error"}}, status=500)
        reply = self.script.pop(0)
        if reply.hang:
            assert self._release is not None
            await self._release.wait()
            return web.json_response({"error": {"message": "stopped"}}, status=503)
        if reply.status != 200:
            message = "rate limited" if reply.status == 429 else "internal error"
            return web.json_response({"error": {"message": message, "type": "error"}}, status=reply.status)
        prompt, completion = reply.usage
        return web.json_response({
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": 0, "model": body.get("model"),
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": reply.content}}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
        })  # fmt: skip
