"""The bench's printed tables: the rows of each size, the overload runs, growth, the
open-loop runs, CPU per request per process, and the targets' verdicts."""

from __future__ import annotations

from typing import Any

from bench import lag, paging
from bench.drive import other_cores, system_ms
from bench.targets import MAIN, growth, main_rows, miss, targets

#: Short column heads of the main operations in the CPU table.
SHORT = {
    "GET /items/{id}": "GET item",
    "GET /items?project first page": "1st page",
    "POST /items": "POST item",
    "PATCH /items/{id}": "PATCH item",
    "PUT /testruns/{id}": "PUT run",
}


def table(rows: list[dict[str, Any]]) -> str:
    """The item rows of one size."""
    header = (
        f"{'operation':42} {'size':>7} {'c':>3} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} "
        f"{'err':>4} {'x bare':>7} {'drv cpu':>7} {'cpu ms':>7} {'other':>6}"
    )
    lines = [header, "-" * len(header)]
    for r in rows:
        used = r.get("cpu")
        cpu = f"{system_ms(used):>7.2f} {other_cores(used):>6.2f}" if used else f"{'':>7} {'':>6}"
        lines.append(
            f"{r['operation']:42} {r['size']:>7} {r['concurrency']:>3} {r['rps']:>8.0f} "
            f"{r['p50_ms']:>8.2f} {r['p99_ms']:>8.2f} {r['errors']:>4} "
            f"{r.get('ratio_to_bare', 0):>7.2f} {r['driver_cpu']:>7.2f} {cpu}".rstrip()
        )
    return "\n".join(lines)


def open_loop_table(runs: list[dict[str, Any]]) -> str:
    """The main operations paced at half their c32 throughput (open loop)."""
    header = (
        f"{'open loop, half of c32':30} {'asked/s':>8} {'done/s':>7} {'reqs':>6} "
        f"{'p50 ms':>8} {'p99 ms':>8} {'p99.9 ms':>9} {'err':>4} {'extra':>5} {'late ms':>7} "
        f"{'drv cpu':>7}"
    )
    lines = ["", header, "-" * len(header)]
    for r in runs:
        lines.append(
            f"{r['operation']:30} {r['rate']:>8.0f} {r['rps']:>7.0f} {r['requests']:>6} "
            f"{r['p50_ms']:>8.2f} {r['p99_ms']:>8.2f} {r.get('p999_ms', 0):>9.2f} "
            f"{r['errors']:>4} {r['extra_connections']:>5} {r['max_late_ms']:>7.1f} "
            f"{r['driver_cpu']:>7.2f}"
        )
    lines.append(
        "latency from when each request was due; extra: connections opened because every "
        "other was busy; late: how late the driver sent its latest request"
    )
    return "\n".join(lines)


def cpu_table(main: list[dict[str, Any]]) -> str:
    """CPU ms per request of each process (rows) for each main operation at c32 (columns),
    the system's total at c32 and at c1, and how busy the rest of the machine was."""
    by_operation = {r["operation"]: r for r in main if r["concurrency"] == 32 and r.get("cpu")}
    at_1 = {r["operation"]: r for r in main if r["concurrency"] == 1 and r.get("cpu")}
    operations = [o for o in MAIN if o in by_operation]
    if not operations:
        return ""
    processes: list[str] = []
    for operation in operations:
        for p in by_operation[operation]["cpu"]:
            if p["system"] and p["process"] not in processes:
                processes.append(p["process"])
    header = f"{'CPU ms per request, c32':34}" + "".join(
        f" {SHORT.get(o, o[:10]):>10}" for o in operations
    )
    lines = ["", header, "-" * len(header)]

    def cells(value: Any) -> str:
        return "".join(f" {value(o):>10}" for o in operations)

    def of(operation: str, process: str) -> str:
        found = [
            p["cpu_ms_per_request"]
            for p in by_operation[operation]["cpu"]
            if p["process"] == process
        ]
        return f"{found[0]:.2f}" if found else "-"

    for process in processes:
        lines.append(f"{process[:34]:34}" + cells(lambda o, p=process: of(o, p)))
    lines.append("-" * len(header))
    lines.append(
        f"{'all processes of the system':34}"
        + cells(lambda o: f"{system_ms(by_operation[o]['cpu']):.2f}")
    )
    lines.append(
        f"{'the same at c1':34}"
        + cells(lambda o: f"{system_ms(at_1[o]['cpu']):.2f}" if o in at_1 else "-")
    )
    lines.append(
        f"{'cores busy outside it (noise)':34}"
        + cells(lambda o: f"{other_cores(by_operation[o]['cpu']):.2f}")
    )
    return "\n".join(lines)


def overload_table(results: list[dict[str, Any]]) -> str:
    """The overload runs: capacity, then many connections retrying at once."""
    header = (
        f"{'overload GET /items/{id}':28} {'conns':>5} {'ok/s':>7} {'429/s':>7} {'of cap':>7} "
        f"{'ok p50':>7} {'ok p99':>7} {'429 p50':>7} {'429 p99':>7} {'other':>5} "
        f"{'drv cpu':>7} {'hz p99':>7} {'drv late':>8}"
    )
    lines = ["", header, "-" * len(header)]
    for r in results:
        lines.append(
            f"{r['mode']:28} {r['connections']:>5} {r['ok_per_s']:>7.0f} "
            f"{r['refused_per_s']:>7.0f} {r['of_capacity']:>7.2f} {r['ok_p50_ms']:>7.1f} "
            f"{r['ok_p99_ms']:>7.1f} {r['refused_p50_ms']:>7.1f} "
            f"{r['refused_p99_ms']:>7.1f} {r['other_errors'] + r['broken_connections']:>5} "
            f"{r['driver_cpu']:>7.2f} {r.get('healthz_p99_ms', 0.0):>7.1f} "
            f"{r.get('driver_late_p99_ms', 0.0):>8.1f}"
        )
    return "\n".join(lines)


def report(
    rows: list[dict[str, Any]],
    sizes: tuple[int, ...],
    overload: list[dict[str, Any]],
    testmgmt: dict[str, Any] | None = None,
    attachments: dict[str, Any] | None = None,
    history: dict[str, Any] | None = None,
    **speed: Any,
) -> str:
    """Growth, the open-loop runs, CPU per process and the targets, after the per-size
    tables; ``speed`` holds ``bench.targets.targets``' keyword arguments (the open-loop
    runs, the comparison's targets, the bench's wall time)."""
    lines = []
    for large in sizes[1:]:
        lines += [
            "",
            f"growth {sizes[0]} -> {large} items (cost = 1/rps; vs bare cancels machine drift)",
            f"{'operation':42} {'c':>3} {'rps ' + str(sizes[0]):>10} {'rps ' + str(large):>11} "
            f"{'growth':>7} {'vs bare':>8}",
        ]
        for g in growth(rows, sizes[0], large):
            lines.append(
                f"{g['operation']:42} {g['concurrency']:>3} {g['rps_small']:>10.0f} "
                f"{g['rps_large']:>11.0f} {g['growth']:>7.2f} {g['growth_vs_bare']:>8.2f}"
            )
    if speed.get("paging_walks"):
        lines.append(paging.table(speed["paging_walks"]))
    if speed.get("open_loop"):
        lines.append(open_loop_table(speed["open_loop"]))
    cpu = cpu_table(main_rows(rows, testmgmt))
    if cpu:
        lines.append(cpu)
    lags = lag.table([*rows, *(testmgmt["rows"] if testmgmt else [])])
    if lags.count("\n") > 1:
        lines += [
            "",
            "consumers' lag during the write rows (most seen; drain: catch-up after)",
            lags,
        ]
    lines += ["", f"{'target':66} {'measured':>9}  met"]
    for t in targets(rows, sizes, overload, testmgmt, attachments, history, **speed):
        verdict = "-" if t["met"] is None else "yes" if t["met"] else "NO"
        gap = miss(t)
        lines.append(
            f"{t['target']:66} {t['measured']:>9.2f}  {verdict}" + (f", {gap}" if gap else "")
        )
    return "\n".join(lines)
