"""PostgreSQL for the tag-view and copy tests, on top of the ``pg_schema`` fixture in ``conftest.py``.

``pg_url`` is a ``postgresql://`` URL whose ``search_path`` is the test's own schema, for
code that takes a URL (``prguide view --database-url``, ``prguide db copy``). Like
``pg_schema`` it skips when ``PRGUIDE_TEST_DATABASE_URL`` is unreachable, and fails under
``CI``. :class:`Outage` takes the database away and back behind a proxy.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from urllib.parse import quote, urlsplit, urlunsplit

import pytest
from conftest import PG_URL, require_postgresql  # noqa: F401 - re-exported for the tests

#: The server the PostgreSQL tests use.
TEST_DATABASE_URL = PG_URL


def schema_url(url: str, schema: str) -> str:
    """``url`` with ``?options=-csearch_path=SCHEMA`` so every connection uses ``schema``."""
    separator = "&" if "?" in url else "?"
    return f"{url}{separator}options={quote(f'-csearch_path={schema}')}"


@pytest.fixture
def pg_url(pg_schema):
    """A URL on the test's own schema (``pg_schema``: created by the first migration, dropped after)."""
    url, schema = pg_schema
    return schema_url(url, schema)


class Outage:
    """A TCP proxy on loopback in front of the PostgreSQL server, to take the database away and back.

    Point prguide at :attr:`url`. :meth:`down` drops every connection through the proxy
    and refuses new ones (what clients see of a server restarting); :meth:`up` listens
    again on the same port. The real server is never touched. The proxy runs in threads
    of its own, so it forwards even while the test's event loop is busy. Use as a
    context manager, or call :meth:`close`.
    """

    def __init__(self, url: str = TEST_DATABASE_URL):
        parts = urlsplit(url)
        self._target = (parts.hostname or "127.0.0.1", parts.port or 5432)
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self._listener: socket.socket | None = None
        self.port = 0
        self.up()
        userinfo = parts.netloc.rpartition("@")[0]
        netloc = f"{userinfo}@127.0.0.1:{self.port}" if userinfo else f"127.0.0.1:{self.port}"
        #: The database's URL through the proxy.
        self.url = urlunsplit(parts._replace(netloc=netloc))

    def up(self) -> None:
        """Accept connections (again, on the same port)."""
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), name="pg-outage-accept", daemon=True).start()

    def down(self) -> None:
        """Drop every connection through the proxy and refuse new ones until :meth:`up`."""
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked in accept()
            listener.close()
        with self._lock:
            dropped, self._sockets = self._sockets, set()
        for sock in dropped:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    close = down

    def __enter__(self) -> Outage:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # down()
            try:
                server = socket.create_connection(self._target, timeout=5)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            with self._lock:
                if self._listener is not listener:  # went down meanwhile
                    client.close()
                    server.close()
                    return
                self._sockets |= {client, server}
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, sink), name="pg-outage-pump", daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        for sock in (source, sink):  # one side ended: end the other
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
