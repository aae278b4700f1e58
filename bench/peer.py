"""The peer in the same run: Kiwi TCMS's figures beside Plumbline's, with the ratios.

``make bench PEER=kiwi`` runs ``../shared/anchors/kiwi/run.sh`` after Plumbline's rows,
once the system under test has stopped (never at the same time: both would share the
cores), reads the JSON it writes and prints Plumbline's equivalent rows beside Kiwi's.
``KIWI_RESULT=<file>`` reads a result Kiwi already wrote instead of running it.

To print the comparison again from saved results, one column per topology::

    python -m bench.peer --kiwi <kiwi result.json> bench/results/<run>.json [...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from bench import testmgmt as tm
from bench.drive import system_ms
from bench.targets import CREATE, FIRST_PAGE, ITEM, PATCH, Target, main_rows, miss, verdict

#: The anchor's one command, beside the repository (``../shared`` from its root).
KIWI_RUN = Path(__file__).resolve().parents[2] / "shared" / "anchors" / "kiwi" / "run.sh"
CONCURRENCIES = (1, 32)
#: (row, Plumbline's operation, Kiwi's, the least ratio at c32); at c1 every row asks
#: ``AT_C1`` (latency-bound).
PAIRS = (
    ("read one record", ITEM, "read", 3.0),
    ("first page (20 items; Kiwi 50)", FIRST_PAGE, "list50", 3.0),
    ("create", CREATE, "create", 3.0),
    ("update an item (Kiwi: execution)", PATCH, "update", 5.0),
    ("test-run result (Kiwi: execution)", tm.PUT, "update", 5.0),
)
AT_C1 = 1.5
#: What each row of Kiwi's result must hold.
KIWI_FIELDS = ("op", "c", "rps", "p50_ms", "p99_ms")


def run_kiwi(out: Path, script: Path = KIWI_RUN) -> Path:
    """Runs Kiwi's anchor (11 to 20 minutes on 2 cores), its JSON going to ``out``."""
    if not script.is_file():
        raise FileNotFoundError(f"Kiwi's anchor is not at {script}: KIWI_RESULT names a result")
    print(f"\nrunning Kiwi TCMS's anchor ({script}); its result goes to {out}", flush=True)
    subprocess.run(["bash", str(script)], env={**os.environ, "OUT": str(out)}, check=True)
    return out


def read_kiwi(path: Path) -> dict[str, Any]:
    """Kiwi's result at ``path``: its run (when, how busy the machine was before) and its
    rows; ValueError naming what is missing when it is not such a result."""
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not JSON: {error}") from error
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise ValueError(f"{path} has no `results` list: not a Kiwi anchor result")
    for n, row in enumerate(data["results"]):
        missing = [f for f in KIWI_FIELDS if not isinstance(row, dict) or f not in row]
        if missing:
            raise ValueError(f"{path}: results[{n}] lacks {', '.join(missing)}")
    run = data.get("run", {})
    return {
        "file": str(path),
        "anchor": data.get("anchor", "Kiwi TCMS"),
        "started": run.get("started"),
        "busy_pct_before": run.get("busy_pct_before"),
        "nproc": run.get("nproc"),
        "results": data["results"],
    }


def _kiwi_row(kiwi: dict[str, Any], op: str, c: int) -> dict[str, Any] | None:
    return next((r for r in kiwi["results"] if r["op"] == op and r["c"] == c), None)


def _kiwi_cpu(row: dict[str, Any]) -> float | None:
    """Kiwi's CPU ms per request: its gunicorn workers and PostgreSQL (whole cluster)."""
    parts = [row.get("gunicorn_cpu_ms_per_req"), row.get("postgres_cpu_ms_per_req")]
    return sum(p for p in parts if p is not None) if any(p is not None for p in parts) else None


def compare(plumbline: list[dict[str, Any]], kiwi: dict[str, Any]) -> list[dict[str, Any]]:
    """Each pair at each concurrency: both throughputs, latencies and CPU per request, and
    Plumbline's throughput over Kiwi's against the least ratio asked. ``plumbline`` holds
    the main operations' closed-loop rows (``bench.targets.main_rows``)."""
    compared = []
    for name, operation, op, at_32 in PAIRS:
        for c in CONCURRENCIES:
            ours = next(
                (r for r in plumbline if r["operation"] == operation and r["concurrency"] == c),
                None,
            )
            theirs = _kiwi_row(kiwi, op, c)
            ratio = (
                ours["rps"] / theirs["rps"]
                if ours and theirs and theirs["rps"] and ours["rps"]
                else None
            )
            compared.append(
                {
                    "row": name,
                    "operation": operation,
                    "kiwi_op": op,
                    "concurrency": c,
                    "rps": ours["rps"] if ours else None,
                    "p50_ms": ours["p50_ms"] if ours else None,
                    "p99_ms": ours["p99_ms"] if ours else None,
                    "cpu_ms": system_ms(ours["cpu"]) if ours and ours.get("cpu") else None,
                    "kiwi_rps": theirs["rps"] if theirs else None,
                    "kiwi_p50_ms": theirs["p50_ms"] if theirs else None,
                    "kiwi_p99_ms": theirs["p99_ms"] if theirs else None,
                    "kiwi_cpu_ms": _kiwi_cpu(theirs) if theirs else None,
                    "ratio": ratio,
                    "limit": at_32 if c == 32 else AT_C1,
                }
            )
    return compared


def targets(compared: list[dict[str, Any]]) -> list[Target]:
    """Each row's ratio to Kiwi against the least asked (None where a side is missing)."""
    return [
        (
            f"{r['operation']} c{r['concurrency']} / Kiwi {r['kiwi_op']} (>= {r['limit']})",
            r["ratio"],
            r["limit"],
            True,
        )
        for r in compared
    ]


def _figure(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def table(compared: list[dict[str, Any]], kiwi: dict[str, Any], title: str = "Plumbline") -> str:
    """The comparison: Kiwi's and Plumbline's req/s, p50 / p99 and CPU ms per request side
    by side, the ratio, the least asked and the verdict."""
    busy = kiwi.get("busy_pct_before")
    header = (
        f"{'vs Kiwi TCMS':34} {'c':>3} {'Kiwi r/s':>9} {title[:9]:>9} {'ratio':>6} "
        f"{'asked':>6} {'met':>4} {'Kiwi p50/p99':>14} {'ours p50/p99':>14} "
        f"{'Kiwi cpu':>8} {'our cpu':>8}"
    )
    lines = [
        "",
        f"{kiwi['anchor']}, started {kiwi.get('started') or '?'} "
        f"({'?' if busy is None else busy}% busy before it measured); {kiwi['file']}",
        header,
        "-" * len(header),
    ]
    for r in compared:
        judged = verdict(r["row"], r["ratio"], r["limit"], True) if r["ratio"] else None
        met = "-" if judged is None else "yes" if judged["met"] else "NO"
        ours = f"{_figure(r['p50_ms'], '.1f')}/{_figure(r['p99_ms'], '.0f')}"
        theirs = f"{_figure(r['kiwi_p50_ms'], '.1f')}/{_figure(r['kiwi_p99_ms'], '.0f')}"
        lines.append(
            f"{r['row']:34} {r['concurrency']:>3} {_figure(r['kiwi_rps'], '.0f'):>9} "
            f"{_figure(r['rps'], '.0f'):>9} {_figure(r['ratio'], '.2f'):>6} "
            f"{r['limit']:>6.1f} {met:>4} {theirs:>14} {ours:>14} "
            f"{_figure(r['kiwi_cpu_ms'], '.2f'):>8} {_figure(r['cpu_ms'], '.2f'):>8}"
            + (f"  {miss(judged)}" if judged and not judged["met"] else "")
        )
    lines.append(
        "cpu: ms of CPU per request; Kiwi's gunicorn + its whole PostgreSQL cluster, ours "
        "every process of the system"
    )
    return "\n".join(lines)


def reprint(results: list[Path], kiwi_file: Path) -> str:
    """The comparison of each saved Plumbline result with one Kiwi result."""
    kiwi = read_kiwi(kiwi_file)
    parts = []
    for path in results:
        saved = json.loads(path.read_text())
        main = main_rows(saved.get("rows") or [], saved.get("testmgmt"))
        title = f"{saved.get('topology', path.stem)} (size {saved.get('size', '?')}, {path.name})"
        parts += ["", title, table(compare(main, kiwi), kiwi, str(saved.get("topology", "ours")))]
    return "\n".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(prog="bench.peer", description=__doc__)
    parser.add_argument("--kiwi", type=Path, required=True, help="Kiwi's anchor result (JSON)")
    parser.add_argument("results", type=Path, nargs="+", help="bench/results/<run>.json")
    args = parser.parse_args()
    try:
        print(reprint(args.results, args.kiwi))
    except (OSError, ValueError) as error:
        parser.error(str(error))


if __name__ == "__main__":
    main()
