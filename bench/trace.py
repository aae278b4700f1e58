"""``make bench``'s traceability rows (``make bench ONLY=trace``, issue 27).

A project of its own is imported in one request (``REQUIREMENTS`` requirements, each
related to a feature, the feature verified by a test case, the test case related to a
defect: three levels; and each requirement verified by its test case directly), with a
test plan holding every test case and a cycle where a third of the runs passed and a
tenth failed. Then:

1. **trace**: the first page (20 requirements, three levels, latest results in the
   cycle), ``REPEAT`` times: p50 and p99;
2. **coverage totals**: ``GET /coverage?maxResults=1`` (every requirement judged, one
   shown), ``REPEAT`` times;
3. **impact**: an item with ``DEPENDANTS`` items downstream of it, ``REPEAT`` times;
4. **the whole trace as XLSX**: the trace-matrix report, from its POST until its status
   is DONE;
5. **reads beside it all**: ``GET /items/{id}`` p50 alone, then while coverage, traces
   and a report run in a loop beside it, through at least one whole turn of the loop:
   the ratio (a machine's drift is about 10%);
6. **as it was**: a baseline of the whole project is taken, then the first page of the
   trace and the coverage totals at the baseline, and the impact at its moment,
   ``REPEAT`` times each (read from the history; informational rows, no targets);
7. **ReqIF** (issue 28): the whole project exported as ReqIF (streamed), then that
   document imported into an empty project: seconds and objects a second (the issue's
   target: a 50,000-object file imports in under a minute, distributed).

Rows 6 and 7 have no target; they run when the trace part runs alone (``ONLY=trace``) or
at ``SIZE=large``, not in the whole run at normal size, which must finish in ten minutes.

``SIZE=large`` imports ``REQUIREMENTS_LARGE`` requirements (101,001 items: the issue's
"coverage totals of a 100,000-item project").
"""

from __future__ import annotations

import statistics
import threading
import time
from typing import Any

import httpx
import orjson

from bench.drive import wait_for_feed
from plumbline.gateway.bodies import MAX_GROUP_CASES

REQUIREMENTS = 10_000
REQUIREMENTS_LARGE = 25_000
DEPENDANTS = 1_000
REPEAT = 20
READS = 200
#: Targets (distributed): first page of the trace, coverage totals, impact, the whole
#: trace as XLSX, and the slowdown of item reads beside them.
TRACE_PAGE_S = 0.2
COVERAGE_S = 2.0
IMPACT_S = 0.2
REPORT_S = 10.0
READ_SLOWDOWN = 1.1


def _lines(types: dict[str, int], rel: dict[str, int], requirements: int) -> bytes:
    out: list[bytes] = []
    for kind in ("REQ", "FEAT", "TC", "DEF"):
        out += [
            orjson.dumps(
                {"key": f"{kind}{n}", "itemType": types[kind], "fields": {"name": f"{kind} {n}"}}
            )
            for n in range(requirements)
        ]
    out += [orjson.dumps({"key": "HUB", "itemType": types["REQ"], "fields": {"name": "Hub"}})]
    out += [
        orjson.dumps({"key": f"DEP{n}", "itemType": types["FEAT"], "fields": {"name": f"Dep {n}"}})
        for n in range(DEPENDANTS)
    ]
    for n in range(requirements):
        for source, target, kind in (
            ("REQ", "FEAT", "Related to"),
            ("FEAT", "TC", "Verified by"),
            ("TC", "DEF", "Related to"),
            ("REQ", "TC", "Verified by"),
        ):
            line = {
                "fromItem": f"{source}{n}",
                "toItem": f"{target}{n}",
                "relationshipType": rel[kind],
            }
            out.append(orjson.dumps(line))
    out += [
        orjson.dumps(
            {"fromItem": "HUB", "toItem": f"DEP{n}", "relationshipType": rel["Related to"]}
        )
        for n in range(DEPENDANTS)
    ]
    return b"\n".join(out) + b"\n"


def _timed(client: httpx.Client, path: str, params: dict[str, Any]) -> float:
    started = time.perf_counter()
    response = client.get(path, params=params)
    elapsed = time.perf_counter() - started
    response.raise_for_status()
    return elapsed


def _quantiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_s": statistics.median(ordered),
        "p99_s": ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))],
    }


def _seed(client: httpx.Client, url: str, auth: str, requirements: int) -> dict[str, Any]:
    types = {
        t["typeKey"]: t["id"]
        for t in client.get("/rest/v1/itemtypes", params={"maxResults": 50}).json()["data"]
    }
    rel = {t["name"]: t["id"] for t in client.get("/rest/v1/relationshiptypes").json()["data"]}
    project = client.post(
        "/rest/v1/projects",
        json={"projectKey": f"TR{int(time.time()) % 100000}", "fields": {"name": "Trace bench"}},
    ).json()["meta"]["id"]
    started = time.perf_counter()
    imported = client.post(
        f"/rest/labs/projects/{project}/import",
        content=_lines(types, rel, requirements),
        headers={"Content-Type": "application/x-ndjson"},
        timeout=3600,
    )
    imported.raise_for_status()
    # The item of the k-th item line has id firstItemId + k: REQ, FEAT, TC, DEF, HUB.
    first = imported.json()["data"]["firstItemId"]
    seeded = time.perf_counter() - started
    # The import answers before the feed and the history have its events: the rest of
    # the seed waits for them, so its steps are timed apart from that work.
    steps = {"import": seeded, "feed caught up": wait_for_feed(url, project, auth)}
    cases = [first + 2 * requirements + n for n in range(requirements)]
    started = time.perf_counter()
    plan = client.post(
        "/rest/v1/testplans", json={"project": project, "fields": {"name": "Plan"}}
    ).json()["meta"]["id"]
    group = client.get(f"/rest/v1/testplans/{plan}/testgroups").json()["data"][0]["id"]
    for start in range(0, len(cases), MAX_GROUP_CASES):
        client.post(
            f"/rest/labs/testplans/{plan}/testgroups/{group}/testcases/batch",
            json={"testCases": cases[start : start + MAX_GROUP_CASES]},
            timeout=600,
        ).raise_for_status()
    steps["plan"] = time.perf_counter() - started
    started = time.perf_counter()
    made = client.post(
        f"/rest/v1/testplans/{plan}/testcycles",
        json={"fields": {"name": "Cycle", "startDate": "2026-11-01", "endDate": "2026-11-30"}},
        timeout=600,
    )
    if made.status_code != 201:
        raise RuntimeError(
            f"a cycle of {requirements} test cases was not made: {made.status_code} "
            f"{made.text[:300]}"
        )
    cycle = made.json()["meta"]["id"]
    runs: list[int] = []
    start = 0
    while True:
        page = client.get(
            f"/rest/v1/testcycles/{cycle}/testruns", params={"startAt": start, "maxResults": 50}
        ).json()
        runs += [r["id"] for r in page["data"]]
        start += len(page["data"])
        if not page["data"] or start >= page["meta"]["pageInfo"]["totalResults"]:
            break
    steps["cycle"] = time.perf_counter() - started
    started = time.perf_counter()
    results = [
        {"id": run, "fields": {"testRunStatus": "PASSED" if n % 3 == 0 else "FAILED"}}
        for n, run in enumerate(runs)
        if n % 3 == 0 or n % 10 == 1
    ]
    for chunk in range(0, len(results), 500):
        client.patch(
            "/rest/labs/testruns", json=results[chunk : chunk + 500], timeout=600
        ).raise_for_status()
    steps["results"] = time.perf_counter() - started
    return {
        "steps": steps,
        "project": project,
        "req": types["REQ"],
        "cycle": cycle,
        "hub": first + 4 * requirements,
        "item": first,
        "import_s": seeded,
        "items": 4 * requirements + 1 + DEPENDANTS,
        "relationships": 4 * requirements + DEPENDANTS,
    }


def _report_seconds(client: httpx.Client, seeded: dict[str, Any]) -> float:
    started = time.perf_counter()
    work = client.post(
        "/rest/labs/reports/trace-matrix",
        json={
            "project": seeded["project"],
            "format": "XLSX",
            "parameters": {"itemType": seeded["req"], "depth": 3, "testCycle": seeded["cycle"]},
        },
    ).json()["data"]["workId"]
    while True:
        data = client.get(f"/rest/labs/reports/works/{work}").json()["data"]
        if data["status"] in ("DONE", "FAILED"):
            break
        time.sleep(0.1)
    elapsed = time.perf_counter() - started
    if data["status"] != "DONE":
        raise RuntimeError(f"the trace report failed: {data['message']}")
    return elapsed


def measure(
    system: Any, auth: str, requirements: int = REQUIREMENTS, informational: bool = True
) -> dict[str, Any]:
    """Every traceability figure in one dict (``informational``: with the rows that have
    no target, 6 and 7 above)."""
    with httpx.Client(base_url=system.url, headers={"Authorization": auth}, timeout=120) as client:
        seeded = _seed(client, system.url, auth, requirements)
        print(
            f"trace bench: imported {seeded['items']} items in {seeded['import_s']:.0f}s; "
            + ", ".join(f"{step} {s:.1f}s" for step, s in seeded["steps"].items()),
            flush=True,
        )
        trace = {
            "project": seeded["project"],
            "itemType": seeded["req"],
            "depth": 3,
            "testCycle": seeded["cycle"],
        }
        coverage = {
            "project": seeded["project"],
            "itemType": seeded["req"],
            "testCycle": seeded["cycle"],
            "maxResults": 1,
        }
        out: dict[str, Any] = {
            "requirements": requirements,
            **{k: seeded[k] for k in ("items", "relationships", "import_s")},
        }
        out["trace_page"] = _quantiles(
            [_timed(client, "/rest/labs/trace", trace) for _ in range(REPEAT)]
        )
        out["coverage"] = _quantiles(
            [_timed(client, "/rest/labs/coverage", coverage) for _ in range(REPEAT)]
        )
        impact = f"/rest/labs/items/{seeded['hub']}/impact"
        out["impact"] = _quantiles([_timed(client, impact, {"depth": 1}) for _ in range(REPEAT)])
        out["report_s"] = _report_seconds(client, seeded)
        item = f"/rest/v1/items/{seeded['item']}"
        alone = [_timed(client, item, {}) for _ in range(READS)]
        stop, cycled = threading.Event(), threading.Event()

        def busy() -> None:
            with httpx.Client(
                base_url=system.url, headers={"Authorization": auth}, timeout=600
            ) as other:
                while not stop.is_set():
                    _timed(other, "/rest/labs/coverage", coverage)
                    _timed(other, "/rest/labs/trace", trace)
                    _report_seconds(other, seeded)
                    cycled.set()

        beside = threading.Thread(target=busy, daemon=True)
        beside.start()
        try:
            time.sleep(1.0)
            # Reads through at least one whole cycle of the loop (each of its parts, the
            # report's reading and its writing), not only the part under way at first.
            loaded: list[float] = []
            while len(loaded) < READS or not cycled.is_set():
                loaded.append(_timed(client, item, {}))
        finally:
            stop.set()
            beside.join(timeout=120)
        out["reads"] = {
            "alone_p50_s": statistics.median(alone),
            "beside_p50_s": statistics.median(loaded),
            "beside_reads": len(loaded),
            "ratio": statistics.median(loaded) / statistics.median(alone),
        }
        if informational:
            out["historic"] = _historic(client, seeded, trace, coverage, impact)
            out["reqif"] = _reqif(client, seeded)
    return out


def _reqif(client: httpx.Client, seeded: dict[str, Any]) -> dict[str, Any]:
    """The project out as ReqIF, and that document into an empty project."""
    started = time.perf_counter()
    exported = client.get(f"/rest/labs/projects/{seeded['project']}/reqif", timeout=3600)
    exported.raise_for_status()
    export_s = time.perf_counter() - started
    empty = client.post(
        "/rest/v1/projects",
        json={"projectKey": f"RQ{int(time.time()) % 100000}", "fields": {"name": "ReqIF bench"}},
    ).json()["meta"]["id"]
    started = time.perf_counter()
    imported = client.post(
        f"/rest/labs/projects/{empty}/reqif",
        content=exported.content,
        headers={"Content-Type": "application/xml"},
        timeout=3600,
    )
    imported.raise_for_status()
    import_s = time.perf_counter() - started
    # The same document again: every object compared with its item, nothing written.
    started = time.perf_counter()
    again = client.post(
        f"/rest/labs/projects/{empty}/reqif",
        content=exported.content,
        headers={"Content-Type": "application/xml"},
        timeout=3600,
    )
    again.raise_for_status()
    reimport_s = time.perf_counter() - started
    return {
        "objects": seeded["items"],
        "bytes": len(exported.content),
        "export_s": export_s,
        "import_s": import_s,
        "reimport_s": reimport_s,
        "unchanged": again.json()["data"]["unchanged"],
        "relationships": imported.json()["data"]["relationships"],
    }


def _historic(
    client: httpx.Client,
    seeded: dict[str, Any],
    trace: dict[str, Any],
    coverage: dict[str, Any],
    impact: str,
) -> dict[str, Any]:
    """The trace, coverage and impact at a baseline of the whole project."""
    started = time.perf_counter()
    taken = client.post(
        "/rest/labs/baselines",
        json={"name": "Bench", "project": seeded["project"]},
        timeout=600,
    )
    taken.raise_for_status()
    baseline = taken.json()["meta"]["id"]
    baseline_s = time.perf_counter() - started
    moment = client.get(f"/rest/v1/baselines/{baseline}").json()["data"]["createdDate"]
    at = {"baseline": baseline}
    return {
        "baseline_s": baseline_s,
        "trace_page": _quantiles(
            [_timed(client, "/rest/labs/trace", {**trace, **at}) for _ in range(REPEAT)]
        ),
        "coverage": _quantiles(
            [_timed(client, "/rest/labs/coverage", {**coverage, **at}) for _ in range(REPEAT)]
        ),
        "impact": _quantiles(
            [_timed(client, impact, {"depth": 1, "asOf": moment}) for _ in range(REPEAT)]
        ),
    }


def _ms(seconds: float) -> str:
    ms = seconds * 1000
    return f"{ms:.1f} ms" if ms < 10 else f"{ms:.0f} ms"


def report(trace: dict[str, Any]) -> str:
    """The rows as ``make bench`` prints them."""
    return "\n".join(
        [
            "",
            f"traceability ({trace['requirements']} requirements, {trace['items']} items, "
            f"{trace['relationships']} relationships, imported in {trace['import_s']:.0f}s)",
            f"  trace, first page, 3 levels   p50 {_ms(trace['trace_page']['p50_s'])}, p99 {_ms(trace['trace_page']['p99_s'])}",
            f"  coverage totals               p50 {_ms(trace['coverage']['p50_s'])}, p99 {_ms(trace['coverage']['p99_s'])}",
            f"  impact, {DEPENDANTS} dependants        p50 {_ms(trace['impact']['p50_s'])}, p99 {_ms(trace['impact']['p99_s'])}",
            f"  the whole trace as XLSX       {trace['report_s']:.1f} s",
            f"  item reads beside them        p50 {_ms(trace['reads']['alone_p50_s'])} alone, "
            f"{_ms(trace['reads']['beside_p50_s'])} beside "
            f"({trace['reads'].get('beside_reads', READS)} reads): x{trace['reads']['ratio']:.2f}",
            *_historic_rows(trace.get("historic")),
            *_reqif_rows(trace.get("reqif")),
        ]
    )


def _reqif_rows(reqif: dict[str, Any] | None) -> list[str]:
    if reqif is None:
        return []
    objects = reqif["objects"]
    rows = [
        f"  ReqIF export, {objects} objects    {reqif['export_s']:.1f} s "
        f"({objects / reqif['export_s']:.0f} objects/s, {reqif['bytes'] / 2**20:.1f} MiB)",
        f"  ReqIF import of that document  {reqif['import_s']:.1f} s "
        f"({objects / reqif['import_s']:.0f} objects/s, {reqif['relationships']} relations)",
    ]
    if "reimport_s" in reqif:  # results of stop 39 on
        rows.append(
            f"  ReqIF re-import, unchanged     {reqif['reimport_s']:.1f} s "
            f"({objects / reqif['reimport_s']:.0f} objects/s compared, {reqif['unchanged']} "
            "unchanged)"
        )
    return rows


def _historic_rows(historic: dict[str, Any] | None) -> list[str]:
    if historic is None:
        return []
    page, covered, impact = historic["trace_page"], historic["coverage"], historic["impact"]
    return [
        f"  as it was (a baseline of every item, taken in {historic['baseline_s']:.1f} s)",
        f"    trace, first page, 3 levels p50 {_ms(page['p50_s'])}, p99 {_ms(page['p99_s'])}",
        f"    coverage totals             p50 {_ms(covered['p50_s'])}, p99 {_ms(covered['p99_s'])}",
        f"    impact, {DEPENDANTS} dependants      p50 {_ms(impact['p50_s'])}, p99 {_ms(impact['p99_s'])}",
    ]


def targets(trace: dict[str, Any], topology: str) -> list[tuple[str, float, float, bool]]:
    """(name, measured, limit, higher is better) of each target the rows judge."""
    return [
        (
            f"trace first page p50, s (< {TRACE_PAGE_S:g})",
            trace["trace_page"]["p50_s"],
            TRACE_PAGE_S,
            False,
        ),
        (
            f"coverage totals p50, s (< {COVERAGE_S:g})",
            trace["coverage"]["p50_s"],
            COVERAGE_S,
            False,
        ),
        (
            f"impact of {DEPENDANTS} dependants p50, s (< {IMPACT_S:g})",
            trace["impact"]["p50_s"],
            IMPACT_S,
            False,
        ),
        (f"whole trace as XLSX, s (< {REPORT_S:g})", trace["report_s"], REPORT_S, False),
        (
            f"item reads beside traces and reports / alone (<= {READ_SLOWDOWN:g})",
            trace["reads"]["ratio"],
            READ_SLOWDOWN,
            False,
        ),
    ]
