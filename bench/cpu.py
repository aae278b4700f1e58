"""CPU seconds of the processes that serve a measurement, from ``/proc/<pid>/stat``.

A run is bracketed by two samples; what each process used in between shows which one
bounds the throughput. PostgreSQL and NATS are found by their process names: the
backends of the system under test by its databases' names (``pl_<tag>_<service>``),
other clients' backends as one row that is not the system's, and the rest of PostgreSQL
(the postmaster, checkpointer, WAL writer, autovacuum) as one shared row.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")
PROC = Path("/proc")


def cpu_seconds(stat: str, ticks: int = TICKS) -> float:
    """utime + stime of a ``/proc/<pid>/stat`` line, in seconds.

    The command name (field 2) is in parentheses and may hold spaces, so the fields are
    counted from the last ``)``: utime and stime are fields 14 and 15.
    """
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / ticks


def _read(pid: int, name: str) -> str | None:
    try:
        return (PROC / str(pid) / name).read_text()
    except OSError:
        return None


def peak_mib(status: str) -> float | None:
    """The peak resident set (``VmHWM``) of a ``/proc/<pid>/status`` text, in MiB."""
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024  # kB
    return None


def peak_memory(pids: Mapping[int, str]) -> dict[str, float]:
    """The largest peak resident set, MiB, among the processes of each row (a row of
    gateway workers: its largest worker); processes gone are left out."""
    peaks: dict[str, float] = {}
    for pid, label in pids.items():
        status = _read(pid, "status")
        peak = peak_mib(status) if status else None
        if peak is not None:
            peaks[label] = max(peak, peaks.get(label, 0.0))
    return peaks


def process_seconds(pid: int) -> float | None:
    """The CPU seconds ``pid`` has used so far; None once it is gone."""
    stat = _read(pid, "stat")
    return cpu_seconds(stat) if stat else None


#: The row of PostgreSQL backends serving other clients' databases (another test suite on
#: the same server): not the system's, so no total of the system counts them.
OTHER_DATABASES = "PostgreSQL, other databases' backends"


def _is_client(word: str) -> bool:
    """Whether a word of a backend's title is its client: ``host(port)`` or ``[local]``."""
    return word == "[local]" or (word.endswith(")") and word[:-1].partition("(")[2].isdigit())


def database_label(cmdline: str, database_prefix: str) -> str | None:
    """The row a PostgreSQL or NATS process counts in, from its command line (NUL
    separated), or None when it is neither."""
    words = cmdline.replace("\0", " ").split()
    if not words:
        return None
    if words[0] == "postgres:" or words[0].endswith("/postgres"):
        for word in words:
            if word.startswith(database_prefix):
                return f"PostgreSQL backends: {word[len(database_prefix) :]}"
        if words[0] == "postgres:" and any(_is_client(word) for word in words):
            return OTHER_DATABASES
        return "PostgreSQL, rest (shared)"
    if words[0].endswith("nats-server"):
        return "NATS (shared)"
    return None


def outside_processes(database_prefix: str) -> dict[int, str]:
    """PostgreSQL's and NATS's processes on this machine, each with its row."""
    found = {}
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        cmdline = _read(int(entry.name), "cmdline")
        label = database_label(cmdline, database_prefix) if cmdline else None
        if label:
            found[int(entry.name)] = label
    return found


def machine_busy(stat: str | None = None, ticks: int = TICKS) -> float:
    """CPU seconds every core of the machine has been busy (not idle nor waiting for I/O)
    since boot, from the first line of ``/proc/stat``."""
    text = stat if stat is not None else (PROC / "stat").read_text()
    fields = [int(v) for v in text.splitlines()[0].split()[1:]]
    # user nice system idle iowait irq softirq steal guest guest_nice; guest time is
    # already counted in user.
    return (sum(fields[:8]) - fields[3] - fields[4]) / ticks


def sample(pids: Mapping[int, str]) -> dict[int, float]:
    """CPU seconds so far of each pid still running."""
    seconds = {}
    for pid in pids:
        used = process_seconds(pid)
        if used is not None:
            seconds[pid] = used
    return seconds


def used_between(
    labels: Mapping[int, str], before: Mapping[int, float], after: Mapping[int, float]
) -> dict[str, float]:
    """CPU seconds per row between two samples (a pid born in between counts from 0;
    several pids of one row add up)."""
    rows: dict[str, float] = {}
    for pid, label in labels.items():
        if pid in after:
            rows[label] = rows.get(label, 0.0) + after[pid] - before.get(pid, 0.0)
    return rows
