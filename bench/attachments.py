"""``make bench``'s attachment rows.

Files of random bytes, 1 MiB and 100 MiB, in the bench's work directory (the disk the
embedded blob store's ``file://`` directory and the distributed topology's SeaweedFS
are on), then for each size, in this order so that each transfer's yardstick is
measured right before it:

- ``cp`` of the file to the same directory, once (c1) and eight at a time (c8), the
  median of a few rounds; the copies are removed between rounds, untimed;
- ``PUT /attachments/{id}/file`` (multipart, the file streamed from disk by httpx),
  c1 and c8: eight clients, each to its own attachment, at once;
- ``GET /attachments/{id}/file`` (streamed and discarded, the length checked; the
  SHA-256 is checked once per size, untimed), c1 and c8.

MB/s is 10^6 bytes a second: the bytes of a round (the file size times the
concurrency) over the round's wall time, the median of the rounds. ``x cp`` is that over
the same concurrency's ``cp``. During every transfer row a thread samples the resident
memory (``VmRSS``) of each process that serves the transfer (the gateway, the
attachments service and SeaweedFS; the one process of the embedded topology) every
20 ms; the row keeps each one's peak over its RSS right before the row (``RSS +MiB``
sums Plumbline's processes, not the store's), and the CPU each used (cores over the
rounds' wall time, ``srv cpu`` their sum; ``drv cpu`` is the bench's own client
threads). A streamed transfer holds a few chunks per file whatever its size: the
100 MiB c8 rows are the "memory flat" evidence.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import statistics
import subprocess
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

from bench import cpu
from tests.e2e.api import new_project
from tests.e2e.topology import System

MIB = 2**20
#: The row of the distributed topology's S3 store: shown, but the store (as the disk)
#: is not Plumbline's memory, so ``rss_growth`` and the target leave it out.
STORE = "SeaweedFS (S3 store)"
#: Label -> (bytes, timed rounds) of each file.
FILES = {"1 MiB": (MIB, 20), "100 MiB": (100 * MIB, 3)}
#: The size the targets judge.
LARGE = "100 MiB"
CONCURRENCY = (1, 8)
#: Rounds of ``cp`` at least (cheap, and the yardstick of every ratio).
CP_ROUNDS = 5
#: ``PLUMBLINE_MAX_UPLOAD_BYTES`` of the system under test (the service's default; the
#: e2e harness lowers it to 5 MiB).
MAX_UPLOAD = 2**30
#: Seconds between two RSS samples.
SAMPLE_SECONDS = 0.02
#: A transfer of the large file at least this fraction of the speed of ``cp``.
TARGET_RATIO = 0.5
#: "Memory flat": during the large c8 rows the serving processes together grow by less
#: than this share of the bytes in flight (eight large files); holding files whole
#: would grow them by all of it.
FLAT_SHARE = 0.25


def rss_bytes(pid: int) -> int | None:
    """``VmRSS`` of ``pid`` in bytes; None once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return None


class PeakRss:
    """Samples the RSS of some processes in a thread while the ``with`` block runs."""

    def __init__(self, pids: dict[int, str]) -> None:
        self.pids = pids
        self.before: dict[str, int] = {}
        self.peak: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        for pid, label in self.pids.items():
            rss = rss_bytes(pid)
            if rss is not None:
                self.peak[label] = max(self.peak.get(label, 0), rss)

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_SECONDS):
            self._sample()

    def __enter__(self) -> PeakRss:
        for pid, label in self.pids.items():
            rss = rss_bytes(pid)
            if rss is not None:
                self.before[label] = rss
                self.peak[label] = rss
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    def growth(self) -> dict[str, dict[str, int]]:
        """Per process: RSS before, peak, and peak minus before, in bytes."""
        return {
            label: {
                "before": self.before[label],
                "peak": self.peak[label],
                "growth": self.peak[label] - self.before[label],
            }
            for label in self.before
        }


def serving_processes(system: System) -> dict[int, str]:
    """The processes a transfer goes through, by pid: the distributed topology's
    SeaweedFS (its S3 store of files) too."""
    pids = {
        p.popen.pid: "plumbline (all services)" if p.name == "all" else p.name
        for p in system.processes
        if p.name in ("all", "gateway", "attachments")
    }
    if system.weed is not None and system.weed.process is not None:
        pids[system.weed.process.pid] = STORE
    return pids


def random_file(path: Path, size: int) -> str:
    """Writes ``size`` random bytes to ``path``; their SHA-256."""
    digest = hashlib.sha256()
    with path.open("wb") as out:
        left = size
        while left:
            block = os.urandom(min(left, 4 * MIB))
            digest.update(block)
            out.write(block)
            left -= len(block)
    return digest.hexdigest()


def _row(
    operation: str, label: str, size: int, c: int, walls: list[float], cpu_s: float
) -> dict[str, Any]:
    rates = [size * c / wall / 1e6 for wall in walls]
    return {
        "operation": operation,
        "file": label,
        "bytes": size,
        "concurrency": c,
        "rounds": len(walls),
        "round_s": walls,
        "round_s_median": statistics.median(walls),
        "mb_per_s": statistics.median(rates),
        "mb_per_s_min": min(rates),
        "mb_per_s_max": max(rates),
        # This process's CPU (the clients' threads) over the rounds' wall time, in cores.
        "driver_cpu": cpu_s / sum(walls),
    }


def copy_rounds(source: Path, label: str, size: int, c: int, rounds: int) -> dict[str, Any]:
    """``c`` parallel ``cp`` of ``source`` into its own directory, ``rounds`` times."""
    targets = [source.with_name(f"{source.name}.copy{n}") for n in range(c)]
    walls = []
    for _ in range(rounds):
        started = time.perf_counter()
        copies = [subprocess.Popen(["cp", str(source), str(target)]) for target in targets]
        codes = [copy.wait() for copy in copies]
        walls.append(time.perf_counter() - started)
        if any(codes):
            raise RuntimeError(f"cp answered {codes}")
        for target in targets:
            target.unlink()
    return _row("cp (same disk)", label, size, c, walls, 0.0)


class Transfers:
    """Eight clients, each with its attachment, on a pool of eight threads."""

    def __init__(self, system: System, auth: str, project: int, label: str) -> None:
        self.pool = ThreadPoolExecutor(max(CONCURRENCY))
        self.clients = [
            httpx.Client(
                base_url=f"{system.url}/rest/v1", headers={"Authorization": auth}, timeout=600
            )
            for _ in range(max(CONCURRENCY))
        ]
        self.ids = []
        for n, client in enumerate(self.clients):
            body = {"fields": {"name": f"Bench {label} {n}", "description": "bench file"}}
            response = client.post(f"/projects/{project}/attachments", json=body)
            if response.status_code != 201:
                raise RuntimeError(
                    f"creating an attachment answered {response.status_code}: {response.text}"
                )
            self.ids.append(int(response.json()["meta"]["id"]))

    def close(self) -> None:
        self.pool.shutdown()
        for client in self.clients:
            client.close()

    def upload(self, n: int, path: Path) -> int:
        with path.open("rb") as file:
            response = self.clients[n].put(
                f"/attachments/{self.ids[n]}/file",
                files={"file": (path.name, file, "application/octet-stream")},
            )
        if response.status_code != 200:
            raise RuntimeError(f"upload answered {response.status_code}: {response.text}")
        return path.stat().st_size

    def download(self, n: int, size: int, sha256: str | None = None) -> int:
        digest = hashlib.sha256() if sha256 else None
        received = 0
        with self.clients[n].stream("GET", f"/attachments/{self.ids[n]}/file") as response:
            if response.status_code != 200:
                response.read()
                raise RuntimeError(f"download answered {response.status_code}: {response.text}")
            for chunk in response.iter_bytes():
                received += len(chunk)
                if digest:
                    digest.update(chunk)
        if received != size:
            raise RuntimeError(f"downloaded {received} bytes of {size}")
        if digest and digest.hexdigest() != sha256:
            raise RuntimeError("the downloaded file's SHA-256 differs from the uploaded one's")
        return received

    def rounds(self, c: int, rounds: int, task: Callable[[int], int]) -> tuple[list[float], float]:
        """``rounds`` rounds of ``task(n)`` for n in range(c) at once: each round's wall
        time, and this process's CPU seconds over all of them."""
        walls = []
        cpu = time.process_time()
        for _ in range(rounds):
            started = time.perf_counter()
            for future in [self.pool.submit(task, n) for n in range(c)]:
                future.result()
            walls.append(time.perf_counter() - started)
        return walls, time.process_time() - cpu


def measure(system: System, auth: str, workdir: Path) -> dict[str, Any]:
    """Every attachment row in one dict."""
    files = workdir / "attachment-files"
    files.mkdir(exist_ok=True)
    admin = httpx.Client(
        base_url=f"{system.url}/rest/v1", headers={"Authorization": auth}, timeout=60
    )
    try:
        project = new_project(admin, "ATTB")
        limit = int(system.env.get("PLUMBLINE_MAX_UPLOAD_BYTES", str(MAX_UPLOAD)))
    finally:
        admin.close()
    largest = max(size for size, _ in FILES.values())
    if limit < largest:
        raise RuntimeError(f"PLUMBLINE_MAX_UPLOAD_BYTES is {limit}, below {largest}")
    pids = serving_processes(system)
    out: dict[str, Any] = {
        "rows": [],
        "max_upload_bytes": limit,
        "processes": sorted(pids.values()),
    }
    for label, (size, rounds) in FILES.items():
        path = files / f"random-{size}.bin"
        started = time.monotonic()
        sha256 = random_file(path, size)
        print(f"wrote {label} of random bytes in {time.monotonic() - started:.1f}s", flush=True)
        transfers = Transfers(system, auth, project, label)
        try:
            cp = {c: copy_rounds(path, label, size, c, max(rounds, CP_ROUNDS)) for c in CONCURRENCY}
            for c in CONCURRENCY:
                out["rows"].append(cp[c])
                print(f"  cp {label} c{c}: {cp[c]['mb_per_s']:.0f} MB/s", flush=True)
            # Untimed: connections and credentials, and a file at every attachment.
            for n in range(max(CONCURRENCY)):
                transfers.upload(n, path)
            transfers.download(0, size, sha256)
            jobs: list[tuple[str, Callable[[int], int]]] = [
                ("PUT /attachments/{id}/file", partial(transfers.upload, path=path)),
                ("GET /attachments/{id}/file", partial(transfers.download, size=size)),
            ]
            for operation, task in jobs:
                for c in CONCURRENCY:
                    before = cpu.sample(pids)
                    with PeakRss(pids) as memory:
                        walls, cpu_s = transfers.rounds(c, rounds, task)
                    used = cpu.used_between(pids, before, cpu.sample(pids))
                    row = _row(operation, label, size, c, walls, cpu_s)
                    # The serving processes' CPU over the rounds' wall time, in cores.
                    row["server_cpu"] = {name: s / sum(walls) for name, s in used.items()}
                    row["cp_mb_per_s"] = cp[c]["mb_per_s"]
                    row["ratio_to_cp"] = row["mb_per_s"] / cp[c]["mb_per_s"]
                    row["rss"] = memory.growth()
                    row["rss_growth"] = sum(
                        p["growth"] for name, p in row["rss"].items() if name != STORE
                    )
                    out["rows"].append(row)
                    print(
                        f"  {operation} {label} c{c}: {row['mb_per_s']:.0f} MB/s, "
                        f"{row['ratio_to_cp']:.2f} x cp, RSS +{row['rss_growth'] / MIB:.0f} MiB, "
                        f"server CPU {sum(row['server_cpu'].values()):.2f} cores",
                        flush=True,
                    )
            transfers.download(max(CONCURRENCY) - 1, size, sha256)
        finally:
            transfers.close()
        path.unlink()
    return out


def cleanup(system: System) -> None:
    """Removes the stopped system's ``file://`` blobs (eight files of each size, 800 MiB
    and more); the rest of the work directory (logs) stays."""
    if "PLUMBLINE_BLOB_URL" not in system.env:
        shutil.rmtree(Path(system.env["PLUMBLINE_DATA_DIR"]) / "files", ignore_errors=True)


def _find(att: dict[str, Any], operation: str, label: str, c: int) -> dict[str, Any] | None:
    return next(
        (
            r
            for r in att["rows"]
            if r["operation"].startswith(operation) and r["file"] == label and r["concurrency"] == c
        ),
        None,
    )


def targets(att: dict[str, Any]) -> list[tuple[str, float | None, float | None, bool]]:
    """(name, measured, limit, higher is better) of each target the rows judge."""
    found: list[tuple[str, float | None, float | None, bool]] = []
    for operation, verb in (("PUT", "upload"), ("GET", "download")):
        for c in CONCURRENCY:
            row = _find(att, operation, LARGE, c)
            found.append(
                (
                    f"{verb} {LARGE} c{c}, x cp (>= {TARGET_RATIO})",
                    row["ratio_to_cp"] if row else None,
                    TARGET_RATIO,
                    True,
                )
            )
    c = max(CONCURRENCY)
    limit = FLAT_SHARE * c * FILES[LARGE][0] / MIB
    for operation, verb in (("PUT", "upload"), ("GET", "download")):
        row = _find(att, operation, LARGE, c)
        found.append(
            (
                f"{verb} {LARGE} c{c}, RSS growth MiB (< {limit:.0f})",
                row["rss_growth"] / MIB if row else None,
                limit,
                False,
            )
        )
    return found


def report(att: dict[str, Any]) -> str:
    """The rows, and each serving process's memory during the large c8 rows."""
    header = (
        f"{'attachments':30} {'file':>7} {'c':>3} {'rounds':>6} {'MB/s':>7} {'min':>7} "
        f"{'max':>7} {'x cp':>6} {'RSS +MiB':>8} {'srv cpu':>7} {'drv cpu':>7}"
    )
    lines = ["", header, "-" * len(header)]
    for r in att["rows"]:
        ratio = f"{r['ratio_to_cp']:>6.2f}" if "ratio_to_cp" in r else f"{'-':>6}"
        rss = f"{r['rss_growth'] / MIB:>8.1f}" if "rss_growth" in r else f"{'-':>8}"
        drv = f"{r['driver_cpu']:>7.2f}" if "ratio_to_cp" in r else f"{'-':>7}"
        srv = f"{sum(r['server_cpu'].values()):>7.2f}" if "server_cpu" in r else f"{'-':>7}"
        lines.append(
            f"{r['operation']:30} {r['file']:>7} {r['concurrency']:>3} {r['rounds']:>6} "
            f"{r['mb_per_s']:>7.0f} {r['mb_per_s_min']:>7.0f} {r['mb_per_s_max']:>7.0f} "
            f"{ratio} {rss} {srv} {drv}"
        )
    for operation in ("PUT", "GET"):
        row = _find(att, operation, LARGE, max(CONCURRENCY))
        if row is None:
            continue
        lines += [
            "",
            f"RSS during {row['operation']} {LARGE} c{max(CONCURRENCY)} "
            f"({max(CONCURRENCY) * row['bytes'] // MIB} MiB a round)",
            f"{'process':34} {'before MiB':>10} {'peak MiB':>9} {'growth MiB':>10} {'cores':>6}",
        ]
        for name, p in row["rss"].items():
            lines.append(
                f"{name:34} {p['before'] / MIB:>10.1f} {p['peak'] / MIB:>9.1f} "
                f"{p['growth'] / MIB:>10.1f} {row['server_cpu'].get(name, 0.0):>6.2f}"
            )
    return "\n".join(lines)
