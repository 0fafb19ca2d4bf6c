"""The conditional-request cache (bot.app.answer_cache) is bounded by the bytes it holds,
not by a count of answers: a page of big patches is not kept, and old answers go first."""

from __future__ import annotations

from bot.app.answer_cache import AnswerCache, answer_size


def page(files: int, patch: int) -> tuple:
    return ("etag", None, [{"filename": f"f{i}.py", "patch": "+" * patch} for i in range(files)], None)


def test_the_size_grows_with_what_the_answer_holds():
    assert answer_size(page(10, 1000)) > 10 * 1000
    assert answer_size(page(10, 1000)) < answer_size(page(10, 2000)) < answer_size(page(20, 2000))


def test_answers_past_the_bound_push_out_the_least_recently_used():
    cache = AnswerCache(100_000, max_answer_bytes=50_000)
    for n in range(10):
        cache[f"/pulls/{n}/files"] = page(3, 5_000)  # ~15 KB each
    assert cache.currsize <= 100_000
    assert "/pulls/9/files" in cache and "/pulls/0/files" not in cache


def test_an_answer_too_large_is_not_kept_and_its_stale_copy_goes():
    cache = AnswerCache(1_000_000, max_answer_bytes=50_000)
    cache["/pulls/1/files"] = page(2, 1_000)
    cache["/pulls/1/files"] = page(100, 1_000)  # ~100 KB: read in full next time
    assert "/pulls/1/files" not in cache
    assert cache.currsize == 0


def test_the_client_factory_shares_one_cache_bounded_in_bytes():
    import aiohttp  # noqa: F401 - the factory's session type

    from bot.app.github import ClientFactory

    factory = ClientFactory(object(), session=None, api_url="http://127.0.0.1:9", cache_bytes=123_456)  # type: ignore[arg-type]
    assert isinstance(factory.cache, AnswerCache) and factory.cache.maxsize == 123_456
