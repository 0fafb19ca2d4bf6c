"""The cap on glibc's malloc arenas that ``prguide serve`` sets at start-up."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from bot.app import malloc, server

# Eight threads allocate at once, then glibc describes its heaps (malloc_info(3)): one
# ``<heap nr=...>`` per arena.
_COUNT_ARENAS = textwrap.dedent(
    """
    import ctypes, ctypes.util, os, sys, tempfile, threading
    from bot.app import malloc
    if sys.argv[1] == "limit":
        print("limited", malloc.limit_arenas(2), file=sys.stderr)
    start = threading.Barrier(8)
    held = []
    def work():
        start.wait()
        blocks = [bytearray(4096) for _ in range(2000)]
        held.append(blocks)
    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads: t.start()
    for t in threads: t.join()
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.fopen.restype = ctypes.c_void_p
    libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
    libc.fclose.argtypes = [ctypes.c_void_p]
    path = tempfile.mktemp()
    f = libc.fopen(path.encode(), b"w")
    libc.malloc_info(0, f)
    libc.fclose(f)
    print(open(path).read().count("<heap nr="))
    os.unlink(path)
    """
)


def _arenas(mode: str) -> int:
    env = {"PATH": "", "PYTHONPATH": ":".join(sys.path)}
    done = subprocess.run([sys.executable, "-c", _COUNT_ARENAS, mode], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return int(done.stdout.strip())


@pytest.mark.skipif(malloc._glibc() is None, reason="the arena cap is glibc's")
def test_limit_arenas_caps_the_heaps_threads_allocate_in():
    assert _arenas("free") > 2  # without the cap, threads get arenas of their own
    assert _arenas("limit") <= 2


def test_an_operators_malloc_arena_max_wins(monkeypatch):
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert malloc.limit_arenas(2) is False


def test_serve_caps_the_arenas_before_starting(monkeypatch):
    calls = []
    monkeypatch.setattr(server, "limit_arenas", lambda: calls.append("limit") or True, raising=False)
    monkeypatch.setattr(server, "configure_logging", lambda level: None)

    def fake_run(coro):
        calls.append("loop")
        coro.close()

    monkeypatch.setattr(server.asyncio, "run", fake_run)
    server.run(type("S", (), {"log_level": "INFO", "llm_api_key": None})())
    assert calls == ["limit", "loop"]


# Blocks under glibc's mmap threshold land in the heap; keeping every 50th one alive
# leaves the heap's top in place, so the freed pages between them stay resident until trimmed.
_HOLES = textwrap.dedent(
    """
    from bot.app import malloc
    def rss():
        return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmRSS")) // 1024
    blocks = [bytearray(32 * 1024) for _ in range(3000)]
    kept = blocks[::50]
    del blocks
    before = rss()
    ran = malloc.trim()
    print(before, rss(), ran)
    """
)


@pytest.mark.skipif(malloc._glibc() is None, reason="malloc_trim is glibc's")
def test_trim_hands_freed_heap_pages_back():
    env = {"PATH": "", "PYTHONPATH": ":".join(sys.path)}
    done = subprocess.run([sys.executable, "-c", _HOLES], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    before, after, ran = done.stdout.split()
    assert ran == "True"
    assert int(before) - int(after) > 50  # MiB: most of the ~94 MiB freed


@pytest.mark.skipif(malloc._glibc() is None, reason="malloc_trim is glibc's")
def test_trim_runs_at_most_once_a_second_unless_forced(monkeypatch):
    monkeypatch.setattr(malloc, "_last_trim", float("-inf"))
    now = [100.0]
    assert malloc.trim(clock=lambda: now[0]) is True
    now[0] += malloc.TRIM_EVERY / 2
    assert malloc.trim(clock=lambda: now[0]) is False
    assert malloc.trim(force=True, clock=lambda: now[0]) is True
    now[0] += malloc.TRIM_EVERY
    assert malloc.trim(clock=lambda: now[0]) is True
