"""The traceability bench's import file and its verdicts."""

from __future__ import annotations

import orjson

from bench import trace


def test_the_import_file_puts_items_first_and_names_every_relationship_end() -> None:
    types = {"REQ": 1, "FEAT": 2, "TC": 3, "DEF": 4}
    rel = {"Related to": 7, "Verified by": 8}
    lines = [orjson.loads(line) for line in trace._lines(types, rel, 3).splitlines()]
    items = [line for line in lines if "key" in line]
    relationships = [line for line in lines if "fromItem" in line]
    assert lines == items + relationships
    # REQ, FEAT, TC, DEF in blocks, then the hub and its dependants: ids follow the order.
    assert [i["key"] for i in items[:12]] == [
        f"{kind}{n}" for kind in ("REQ", "FEAT", "TC", "DEF") for n in range(3)
    ]
    assert items[12]["key"] == "HUB"
    assert len(items) == 12 + 1 + trace.DEPENDANTS
    keys = {i["key"] for i in items}
    assert all(r["fromItem"] in keys and r["toItem"] in keys for r in relationships)
    assert {"fromItem": "REQ1", "toItem": "TC1", "relationshipType": 8} in relationships
    assert len(relationships) == 4 * 3 + trace.DEPENDANTS


def test_verdicts_compare_each_figure_with_its_limit() -> None:
    figures = {
        "trace_page": {"p50_s": 0.05, "p99_s": 0.1},
        "coverage": {"p50_s": 3.0, "p99_s": 4.0},
        "impact": {"p50_s": 0.01, "p99_s": 0.02},
        "report_s": 4.0,
        "reads": {"alone_p50_s": 0.01, "beside_p50_s": 0.012, "ratio": 1.2},
    }
    judged = {
        name.split(",")[0].split(" (")[0]: (value, limit)
        for name, value, limit, _ in trace.targets(figures, "distributed")
    }
    assert judged["coverage totals p50"] == (3.0, trace.COVERAGE_S)
    assert judged["item reads beside traces and reports / alone"] == (1.2, trace.READ_SLOWDOWN)
    assert [higher for *_, higher in trace.targets(figures, "embedded")] == [False] * 5


def test_the_rows_show_the_trace_as_it_was_when_measured() -> None:
    quantiles = {"p50_s": 0.05, "p99_s": 0.1}
    figures = {
        "requirements": 3,
        "items": 13,
        "relationships": 12,
        "import_s": 1.0,
        "trace_page": quantiles,
        "coverage": quantiles,
        "impact": quantiles,
        "report_s": 4.0,
        "reads": {"alone_p50_s": 0.01, "beside_p50_s": 0.012, "ratio": 1.2},
    }
    assert "as it was" not in trace.report(figures)
    historic = {"baseline_s": 2.5, "trace_page": quantiles, "coverage": quantiles}
    rows = trace.report(figures | {"historic": historic | {"impact": {"p50_s": 0.3, "p99_s": 0.4}}})
    assert "as it was (a baseline of every item, taken in 2.5 s)" in rows
    assert f"impact, {trace.DEPENDANTS} dependants      p50 300 ms, p99 400 ms" in rows


def test_the_reqif_rows_give_seconds_and_objects_a_second() -> None:
    rows = trace._reqif_rows(
        {
            "objects": 1000,
            "bytes": 2**21,
            "export_s": 2.0,
            "import_s": 4.0,
            "reimport_s": 5.0,
            "unchanged": 1000,
            "relationships": 7,
        }
    )
    assert rows == [
        "  ReqIF export, 1000 objects    2.0 s (500 objects/s, 2.0 MiB)",
        "  ReqIF import of that document  4.0 s (250 objects/s, 7 relations)",
        "  ReqIF re-import, unchanged     5.0 s (200 objects/s compared, 1000 unchanged)",
    ]
    # Results taken before the re-import row have none.
    older = {"objects": 10, "bytes": 1, "export_s": 1.0, "import_s": 1.0, "relationships": 0}
    assert len(trace._reqif_rows(older)) == 2
    assert trace._reqif_rows(None) == []
