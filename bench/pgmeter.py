"""The CPU PostgreSQL's backends spend serving some client processes, for the benchmarks.

SQLite does its work inside prguide's process; PostgreSQL does much of it in the server's
backend processes, one per connection. To compare the two modes fairly, a benchmark adds
the CPU of the backends serving prguide's connections (:class:`BackendMeter`), found by
the clients' local TCP ports in ``pg_stat_activity`` and read from ``/proc/<pid>/stat``
(the server must run on this machine).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path

from common import cpu_seconds


def local_ports(pids: Sequence[int]) -> list[int]:
    """Local TCP ports of the sockets processes ``pids`` hold open (``/proc/PID/fd``, ``/proc/net/tcp``)."""
    inodes = set()
    for pid in pids:
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                    if target.startswith("socket:["):
                        inodes.add(target[8:-1])
    ports = []
    for table_path in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table_path).read_text().splitlines()[1:]:
                fields = line.split()
                if fields[9] in inodes:
                    ports.append(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


class BackendMeter:
    """CPU seconds PostgreSQL's backends spent serving some client processes, from ``/proc/<pid>/stat``.

    :meth:`poll` (every 100 ms during the measurement) finds the backends of the clients'
    connections (``pg_stat_activity.client_port`` among the clients' local ports) and
    reads each one's CPU; a backend already there at :meth:`start` counts from its CPU
    then, a newer one from zero. :meth:`aux_seconds` is the same for the server's
    background processes (WAL writer, checkpointer, background writer).
    """

    AUX = ("walwriter", "checkpointer", "background writer")

    def __init__(self, url: str, client_pids: Sequence[int]):
        import psycopg

        self.client_pids = list(client_pids)
        self.conn = psycopg.connect(url, autocommit=True)
        self.base: dict[int, float] = {}
        self.last: dict[int, float] = {}
        self.aux_base: dict[int, float] = {}
        self.aux_last: dict[int, float] = {}

    def _look(self) -> tuple[list[int], list[int]]:
        ports = local_ports(self.client_pids)
        rows = self.conn.execute(
            "SELECT pid, client_port, backend_type FROM pg_stat_activity"
            " WHERE client_port = ANY(%s) OR backend_type = ANY(%s)", (ports, list(self.AUX))
        ).fetchall()
        return [r[0] for r in rows if r[2] not in self.AUX], [r[0] for r in rows if r[2] in self.AUX]

    def start(self) -> None:
        """Take the CPU of the backends there now as their starting point."""
        backends, aux = self._look()
        self.base = {pid: cpu_seconds(pid) for pid in backends}
        self.aux_base = {pid: cpu_seconds(pid) for pid in aux}
        self.last, self.aux_last = dict(self.base), dict(self.aux_base)

    def poll(self) -> None:
        """Find the backends now and read their CPU (a backend that has gone keeps its last reading)."""
        backends, aux = self._look()
        for pid in backends:
            self.base.setdefault(pid, 0.0)
            self.last[pid] = max(self.last.get(pid, 0.0), cpu_seconds(pid))
        for pid in aux:
            self.aux_base.setdefault(pid, cpu_seconds(pid))
            self.aux_last[pid] = max(self.aux_last.get(pid, 0.0), cpu_seconds(pid))

    def seconds(self) -> float:
        """CPU seconds of the clients' backends since :meth:`start`."""
        return sum(self.last[pid] - self.base[pid] for pid in self.last)

    def aux_seconds(self) -> float:
        """CPU seconds of the server's background processes since :meth:`start`."""
        return sum(self.aux_last[pid] - self.aux_base[pid] for pid in self.aux_last)

    def close(self) -> None:
        self.conn.close()
