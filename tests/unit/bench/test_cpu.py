"""CPU seconds from /proc: the stat line's fields, the rows of PostgreSQL and NATS."""

from __future__ import annotations

import os

from bench.cpu import (
    OTHER_DATABASES,
    cpu_seconds,
    database_label,
    machine_busy,
    peak_memory,
    peak_mib,
    process_seconds,
    used_between,
)

#: A /proc/<pid>/stat line whose command name holds spaces and parentheses.
STAT = "4242 (python (x) y) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 50 0 0 20 0 3 0 99 0 0"


def test_utime_and_stime_are_counted_from_after_the_command_name() -> None:
    assert cpu_seconds(STAT, ticks=100) == 3.0


def test_this_process_has_used_some_cpu_and_a_missing_one_none() -> None:
    assert (process_seconds(os.getpid()) or 0) >= 0
    assert process_seconds(2**22 + 12345) is None


def test_postgres_backends_count_by_database_and_the_rest_as_shared() -> None:
    prefix = "pl_abc_"
    backend = "postgres: 15/main: postgres pl_abc_testmgmt 127.0.0.1(5555) idle"
    assert database_label(backend, prefix) == "PostgreSQL backends: testmgmt"
    # Another client's backend (another test suite on the same server) is not the
    # system's; the server's own processes are shared.
    other = "postgres: 15/main: postgres pl_zzz_items 127.0.0.1(5556) idle"
    assert database_label(other, prefix) == OTHER_DATABASES
    local = "postgres: 15/main: postgres postgres [local] idle"
    assert database_label(local, prefix) == OTHER_DATABASES
    for aux in ("checkpointer", "walwriter", "autovacuum launcher", "background writer"):
        assert database_label(f"postgres: 15/main: {aux}", prefix) == "PostgreSQL, rest (shared)"
    postmaster = "/usr/lib/postgresql/15/bin/postgres\0-D\0/var/lib/postgresql/15/main\0"
    assert database_label(postmaster, prefix) == "PostgreSQL, rest (shared)"
    assert database_label("/usr/sbin/nats-server\0-p\0004222\0", prefix) == "NATS (shared)"
    # A client naming the database in its arguments is not PostgreSQL.
    client = "python\0-m\0pytest\0postgresql://postgres@127.0.0.1:5432/postgres\0"
    assert database_label(client, prefix) is None
    assert database_label("", prefix) is None


def test_use_between_samples_adds_up_per_row_and_counts_new_pids_from_zero() -> None:
    labels = {1: "gateway", 2: "PostgreSQL", 3: "PostgreSQL", 4: "gone"}
    before = {1: 10.0, 2: 1.0, 4: 5.0}
    after = {1: 12.5, 2: 2.0, 3: 0.5}
    assert used_between(labels, before, after) == {"gateway": 2.5, "PostgreSQL": 1.5}


def test_the_machine_is_busy_for_all_but_idle_and_io_wait() -> None:
    stat = "cpu  100 20 30 500 50 5 5 10 7 0\ncpu0 1 2 3 4 5 6 7 8 9 0\n"
    assert machine_busy(stat, ticks=100) == (100 + 20 + 30 + 5 + 5 + 10) / 100
    assert machine_busy() > 0


STATUS = "Name:\tplumbline\nVmPeak:\t  900000 kB\nVmHWM:\t  219136 kB\nVmRSS:\t  200000 kB\n"


def test_the_peak_resident_set_is_vmhwm_in_mib() -> None:
    assert peak_mib(STATUS) == 214.0
    assert peak_mib("Name:\tkthreadd\n") is None  # kernel threads have none


def test_a_row_of_workers_peaks_at_its_largest_and_gone_processes_are_left_out() -> None:
    own = os.getpid()
    with open(f"/proc/{own}/status") as status:
        mine = peak_mib(status.read())
    assert mine is not None
    assert mine > 1  # this test's own process holds more than a MiB
    gone = 2**22 + 7  # beyond the kernel's pid range
    peaks = peak_memory({own: "workers", 1: "workers", gone: "the gone one"})
    assert set(peaks) == {"workers"}
    assert peaks["workers"] >= mine
