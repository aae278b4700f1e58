"""The bench's printed tables: the rows of each size, the overload runs, growth and the
targets' verdicts."""

from __future__ import annotations

from typing import Any

from bench.targets import growth, targets


def table(rows: list[dict[str, Any]]) -> str:
    """The item rows of one size."""
    header = f"{'operation':42} {'size':>7} {'c':>3} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'err':>4} {'x bare':>7} {'drv cpu':>7}"
    lines = [header, "-" * len(header)]
    for r in rows:
        lines.append(
            f"{r['operation']:42} {r['size']:>7} {r['concurrency']:>3} {r['rps']:>8.0f} {r['p50_ms']:>8.2f} "
            f"{r['p99_ms']:>8.2f} {r['errors']:>4} {r.get('ratio_to_bare', 0):>7.2f} {r['driver_cpu']:>7.2f}"
        )
    return "\n".join(lines)


def overload_table(results: list[dict[str, Any]]) -> str:
    """The overload runs: capacity, then many connections retrying at once."""
    header = (
        f"{'overload GET /items/{id}':28} {'conns':>5} {'ok/s':>7} {'429/s':>7} {'of cap':>7} "
        f"{'ok p50':>7} {'ok p99':>7} {'429 p50':>7} {'other':>5} {'drv cpu':>7}"
    )
    lines = ["", header, "-" * len(header)]
    for r in results:
        lines.append(
            f"{r['mode']:28} {r['connections']:>5} {r['ok_per_s']:>7.0f} "
            f"{r['refused_per_s']:>7.0f} {r['of_capacity']:>7.2f} {r['ok_p50_ms']:>7.1f} "
            f"{r['ok_p99_ms']:>7.1f} {r['refused_p50_ms']:>7.1f} "
            f"{r['other_errors'] + r['broken_connections']:>5} {r['driver_cpu']:>7.2f}"
        )
    return "\n".join(lines)


def report(
    rows: list[dict[str, Any]],
    sizes: tuple[int, ...],
    overload: list[dict[str, Any]],
    testmgmt: dict[str, Any] | None = None,
    attachments: dict[str, Any] | None = None,
    history: dict[str, Any] | None = None,
) -> str:
    """Growth and targets, after the per-size tables."""
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
    lines += ["", f"{'target':54} {'measured':>9}  met"]
    for t in targets(rows, sizes, overload, testmgmt, attachments, history):
        verdict = "-" if t["met"] is None else "yes" if t["met"] else "NO"
        lines.append(f"{t['target']:54} {t['measured']:>9.2f}  {verdict}")
    return "\n".join(lines)
