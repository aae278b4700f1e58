"""A request's trace runs from the gateway through gRPC into the event consumer."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.topology import base_env, start_process


def _spans(text: str) -> list[dict[str, Any]]:
    # ConsoleSpanExporter prints one indented JSON object per span.
    spans = []
    for block in re.findall(r"^\{\n.*?^\}$", text, flags=re.S | re.M):
        try:
            spans.append(json.loads(block))
        except ValueError:
            continue
    return spans


def test_one_trace_from_http_to_grpc_to_consumer(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    env["OTEL_TRACES_EXPORTER"] = "console"
    process = start_process("traced", ["--target", "all"], env, tmp_path)
    try:
        url = f"http://127.0.0.1:{process.http_port}/rest/v1"
        created = httpx.post(
            f"{url}/projects",
            json={"projectKey": "TRC", "fields": {"name": "t"}},
            auth=("admin", "admin"),
        )
        assert created.status_code == 201
        feed = httpx.get(
            f"{url}/activities",
            params={"project": created.json()["meta"]["id"]},
            auth=("admin", "admin"),
        )
        assert feed.status_code == 200
    finally:
        assert process.stop() == 0
    spans = _spans(process.log.read_text())
    by_name: dict[str, list[dict[str, Any]]] = {}
    for span in spans:
        by_name.setdefault(span["name"], []).append(span)
    http_span = by_name["POST /rest/v1/projects"][0]
    trace_id = http_span["context"]["trace_id"]
    grpc_spans = by_name["/plumbline.items.v1.Projects/CreateProject"]
    consumer_spans = by_name["consume items.project.created"]
    assert any(s["context"]["trace_id"] == trace_id for s in grpc_spans)
    assert any(s["context"]["trace_id"] == trace_id for s in consumer_spans)
