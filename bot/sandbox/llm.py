"""A local, scripted OpenAI-compatible model server, for testing the narrator.

Serves ``POST /v1/chat/completions`` (and ``GET /v1/models``) on loopback. Each request
takes the next scripted answer::

    async with ScriptedModel([Reply.json({"summary": ...}), Reply.status(429)]) as model:
        config = LLMConfig(url=model.base_url, model="test-model", api_key="sk-test")
        ...
        assert len(model.requests) == 2

A :class:`Reply` is content (the assistant message), an HTTP error status, a hang
(the answer never comes, until the server stops: the client's time-out decides, so no
test sleeps), a trickle (:meth:`Reply.trickling`: headers at once, then one byte of
the body every ``trickle`` seconds until the server stops, so a per-read time-out never
fires), or a broken 200 (:meth:`Reply.raw`: any body and content type, e.g. HTML or a
JSON object whose ``choices`` or ``usage`` are not what the API describes).
``started`` is set when a request arrives (tests wait on it instead of sleeping). ``schema=False`` makes the server refuse ``response_format`` JSON schemas
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
    """One scripted answer: ``content`` text, or an error ``status``, or ``hang``, or
    ``trickle`` (seconds between body bytes), or a ``raw`` 200 body (``content_type``)."""

    content: str | None = None
    status: int = 200
    hang: bool = False
    usage: tuple[int, int] = (120, 40)
    trickle: float = 0.0
    raw: str | bytes | None = None
    content_type: str = "application/json"

    @classmethod
    def trickling(cls, every: float = 0.05) -> Reply:
        """Headers at once, then one space every ``every`` seconds, never the end of the body."""
        return cls(trickle=every)

    @classmethod
    def broken(cls, body: Any, content_type: str = "application/json") -> Reply:
        """A 200 whose body is ``body`` as is (a ``str``/``bytes``) or as JSON (anything else)."""
        raw = body if isinstance(body, str | bytes) else json.dumps(body)
        return cls(raw=raw, content_type=content_type)

    @staticmethod
    def completion(content: Any = "{}", *, choices: Any = None, usage: Any = None) -> dict[str, Any]:
        """A chat completion body with ``content`` (any JSON value), or ``choices``/``usage`` replaced as given."""
        body: dict[str, Any] = {
            "id": "chatcmpl-broken", "object": "chat.completion", "created": 0, "model": "test-model",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 40, "total_tokens": 160},
        }  # fmt: skip
        if choices is not None:
            body["choices"] = choices
        if usage is not None:
            body["usage"] = usage
        return body

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
    #: Answer every request after the script with this reply (a server that always trickles).
    repeat: Reply | None = None
    host: str = "127.0.0.1"
    port: int = 0
    requests: list[dict[str, Any]] = field(default_factory=list)
    authorizations: list[str] = field(default_factory=list)
    base_url: str = ""
    _runner: web.AppRunner | None = None
    _release: asyncio.Event | None = None
    #: Set when a chat request arrives.
    started: asyncio.Event = field(default_factory=asyncio.Event)

    async def __aenter__(self) -> ScriptedModel:
        self._release = asyncio.Event()
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.base_url = f"http://{self.host}:{port}/v1"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._release is not None and self._runner is not None
        self._release.set()
        await self._runner.cleanup()

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": self.model, "object": "model", "owned_by": "sandbox"}]})

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        self.authorizations.append(request.headers.get("Authorization", ""))
        self.started.set()
        fmt = (body.get("response_format") or {}).get("type")
        if fmt == "json_schema" and not self.schema:
            return web.json_response({"error": {"message": "response_format json_schema is not supported", "type": "invalid_request_error"}}, status=400)
        if not self.script and self.repeat is not None:
            self.script.append(self.repeat)
        if not self.script:
            return web.json_response({"error": {"message": "no scripted answer left", "type": "server_error"}}, status=500)
        reply = self.script.pop(0)
        if reply.hang:
            assert self._release is not None
            await self._release.wait()
            return web.json_response({"error": {"message": "stopped"}}, status=503)
        if reply.trickle:
            return await self._trickle(request, reply.trickle)
        if reply.raw is not None:
            raw = reply.raw.encode() if isinstance(reply.raw, str) else reply.raw
            return web.Response(body=raw, status=200, content_type=reply.content_type)
        if reply.status != 200:
            message = "rate limited" if reply.status == 429 else "internal error"
            return web.json_response({"error": {"message": message, "type": "error"}}, status=reply.status)
        prompt, completion = reply.usage
        return web.json_response({
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": 0, "model": body.get("model"),
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": reply.content}}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
        })  # fmt: skip

    async def _trickle(self, request: web.Request, every: float) -> web.StreamResponse:
        assert self._release is not None
        response = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
        await response.prepare(request)
        try:
            while not self._release.is_set():
                await response.write(b" ")  # JSON allows leading whitespace: the body is never over
                try:
                    await asyncio.wait_for(self._release.wait(), every)
                except TimeoutError:
                    pass
        except (ConnectionError, RuntimeError):
            pass  # the client gave up and closed the connection
        return response


#: Replies ``python -m bot.sandbox.llm --reply NAME`` can serve for every request.
NAMED_REPLIES = {
    "trickle": Reply.trickling(0.5),
    "hang": Reply(hang=True),
    "html": Reply.broken("<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html"),
    "choices-object": Reply.broken(Reply.completion(choices={"0": {}})),
    "negative-usage": Reply.broken(Reply.completion('{"summary": "", "why_it_matters": [], "focus_reasons": {}}',
                                                    usage={"prompt_tokens": -1, "completion_tokens": -1})),
    "500": Reply.error(500),
    "429": Reply.error(429),
}  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    """``python -m bot.sandbox.llm --port 8000 --reply trickle``: a model server for other processes.

    Prints ``base_url`` once it listens, then serves until interrupted. Every request gets
    the named reply (:data:`NAMED_REPLIES`), so ``prguide serve`` replicas can be pointed
    at a trickling or broken model (``PRGUIDE_LLM_URL``).
    """
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bot.sandbox.llm", description=main.__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--reply", choices=sorted(NAMED_REPLIES), default="trickle")
    args = parser.parse_args(argv)

    async def serve() -> None:
        async with ScriptedModel([], repeat=NAMED_REPLIES[args.reply], host=args.host, port=args.port) as model:
            print(model.base_url, flush=True)
            await asyncio.Event().wait()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
