"""A local GitHub for prguide: answers GitHub's REST API from pull request bundles.

Run it from the command line (``prguide sandbox --port 8787 --app-id 1 --app-key
key.pem --bundles DIR``) and point prguide's GitHub API base URL at it, or use
it from Python::

    from bot.sandbox import Sandbox

    async with Sandbox(app_id=1, private_key_pem=pem, bundles=[bundle]) as sandbox:
        base_url = sandbox.base_url          # e.g. "http://127.0.0.1:54321"
        ...                                  # run prguide against base_url
        assert sandbox.labels("owner/repo", 7) == ["docs"]
        assert sandbox.snapshot()["comments"]["owner/repo#7"][0]["user"] == "prguide[bot]"

Several installations, each with its own repositories, token and rate limit (one
corpus served in two repositories with :func:`bundle_in_repo`)::

    bundles = [bundle_in_repo(b, repo) for repo in ("org-a/app", "org-b/app") for b in corpus]
    installations = [{"id": 11, "account": "org-a"}, {"id": 12, "account": "org-b"}]
    async with Sandbox(app_id=1, private_key_pem=pem, bundles=bundles, installations=installations) as sandbox:
        ...

In pytest (``tests/sandbox_helpers.py`` has the key fixture and ``start_sandbox``)::

    @pytest.fixture
    async def sandbox(app_private_key, load_bundle_json):
        async with start_sandbox(app_private_key, bundles=[load_bundle_json(7491)]) as sb:
            yield sb

What it serves, and how it fails on purpose, is described in
:mod:`bot.sandbox.server` (headers, conditional requests), :mod:`bot.sandbox.rest`
(GitHub's endpoints), :mod:`bot.sandbox.control` (its own ``/_sandbox/`` control API),
:mod:`bot.sandbox.graphql` (the GraphQL blame of a served git repository),
:mod:`bot.sandbox.hooks` (the webhook deliveries it sends, ``webhook_url=``),
:mod:`bot.sandbox.auth` (app JWTs and installation tokens) and
:mod:`bot.sandbox.faults` (planned failures).
"""

from bot.sandbox.errors import ApiError, BundleError
from bot.sandbox.server import DEFAULT_API_VERSION, Sandbox
from bot.sandbox.state import Installation, SandboxState, bundle_in_repo, repo_of_bundle

__all__ = [
    "DEFAULT_API_VERSION",
    "ApiError",
    "BundleError",
    "Installation",
    "Sandbox",
    "SandboxState",
    "bundle_in_repo",
    "repo_of_bundle",
]
