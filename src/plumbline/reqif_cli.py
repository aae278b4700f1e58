"""``plumbline reqif export``: a project (or an item's subtree, a filter's items, a
baseline) as a ReqIF document from a running server, written to a file as it streams in
(``GET /rest/labs/projects/{id}/reqif``, see docs/contexts/reports.md)."""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import httpx
from tqdm import tqdm

from plumbline.importer_cli import (
    FAILED,
    IMPORT_TIMEOUT,
    OK,
    USAGE,
    Refused,
    Upload,
    auth_of,
    endpoint,
    error_text,
    told,
)

#: The server writes as it reads: a large project takes minutes between pieces at worst.
TIMEOUT = httpx.Timeout(connect=10, read=600, write=60, pool=10)


@dataclass(frozen=True)
class ExportOptions:
    """What ``plumbline reqif export`` was asked to do."""

    project: int
    output: Path | None = None
    format: str = "reqif"
    item: int | None = None
    filter: int | None = None
    baseline: int | None = None
    url: str | None = None
    user: str | None = None
    password: str | None = None
    token: str | None = None
    quiet: bool = False


def _check(options: ExportOptions) -> Path:
    """The file to write, once the options make sense."""
    if options.project <= 0:
        raise Refused(f"--project {options.project}: a project id is a positive number", USAGE)
    if sum(x is not None for x in (options.item, options.filter, options.baseline)) > 1:
        raise Refused("give at most one of --item, --filter and --baseline", USAGE)
    if options.format not in ("reqif", "reqifz"):
        raise Refused(f"--format {options.format}: reqif or reqifz", USAGE)
    output = options.output or Path(f"project-{options.project}.{options.format}")
    if not output.parent.is_dir():
        raise Refused(f"--output {output}: the folder {output.parent} does not exist", USAGE)
    return output


def export(options: ExportOptions, out: IO[str] | None = None, err: IO[str] | None = None) -> int:
    """Writes the export to its file; the exit code."""
    out = out or sys.stdout
    err = err or sys.stderr
    url = endpoint(options.url, f"projects/{options.project}/reqif")
    params: dict[str, str | int] = {"format": options.format}
    for name in ("item", "filter", "baseline"):
        value = getattr(options, name)
        if value is not None:
            params[name] = value
    try:
        output = _check(options)
        headers, auth = auth_of(options)
        written, elapsed = _receive(url, params, headers, auth, output, err, options.quiet)
    except Refused as exc:
        print(f"plumbline: {exc.message}", file=err)
        return exc.code
    print(
        f"exported project {options.project} to {output} ({written} bytes in {elapsed:.1f} s)",
        file=out,
    )
    return OK


def _receive(
    url: str,
    params: dict[str, str | int],
    headers: dict[str, str],
    auth: httpx.BasicAuth | None,
    output: Path,
    err: IO[str],
    quiet: bool,
) -> tuple[int, float]:
    """Streams the answer into ``output`` (through a partial file, so a failed export
    leaves no file behind); the bytes written and the seconds it took."""
    partial = output.with_name(output.name + ".partial")
    began = time.monotonic()
    written = 0
    try:
        with told(url, "the export from", f"writing {output}"):
            with (
                httpx.Client(timeout=TIMEOUT, auth=auth) as client,
                client.stream("GET", url, params=params, headers=headers) as answer,
            ):
                if answer.status_code != 200:
                    answer.read()
                    message, _ = error_text(answer)
                    status = f"{answer.status_code} {answer.reason_phrase}".strip()
                    raise Refused(f"the server refused the export ({status}): {message}", FAILED)
                with (
                    partial.open("wb") as file,
                    tqdm(
                        unit="B",
                        unit_scale=True,
                        unit_divisor=1024,
                        desc="exporting",
                        file=err,
                        disable=quiet,
                    ) as bar,
                ):
                    for chunk in answer.iter_bytes():
                        file.write(chunk)
                        written += len(chunk)
                        bar.update(len(chunk))
            partial.replace(output)
    finally:
        partial.unlink(missing_ok=True)
    return written, time.monotonic() - began


@dataclass(frozen=True)
class ImportOptions:
    """What ``plumbline reqif import`` was asked to do."""

    file: Path
    project: int
    mapping: Path | None = None
    dry_run: bool = False
    delete_left: bool = False
    url: str | None = None
    user: str | None = None
    password: str | None = None
    token: str | None = None
    quiet: bool = False


def import_file(
    options: ImportOptions, out: IO[str] | None = None, err: IO[str] | None = None
) -> int:
    """Sends the document (and the mapping) to the project; the exit code."""
    out = out or sys.stdout
    err = err or sys.stderr
    url = endpoint(options.url, f"projects/{options.project}/reqif")
    try:
        for path, what in ((options.file, "FILE"), (options.mapping, "--mapping")):
            if path is not None and not path.is_file():
                raise Refused(f"{what} {path} is not a file", USAGE)
        if options.project <= 0:
            raise Refused(f"--project {options.project}: a project id is a positive number", USAGE)
        headers, auth = auth_of(options)
        answer = _send(options, url, headers, auth, err)
        if answer.status_code == 202:
            answer = _followed(options, answer, headers, auth, err)
    except Refused as exc:
        print(f"plumbline: {exc.message}", file=err)
        return exc.code
    if answer.status_code != 200:
        message, _ = error_text(answer)
        status = f"{answer.status_code} {answer.reason_phrase}".strip()
        print(f"plumbline: the server refused the import ({status}): {message}", file=err)
        body = (
            answer.json()
            if answer.headers.get("content-type", "").startswith("application/json")
            else {}
        )
        for problem in body.get("errors", [])[1:] if isinstance(body, dict) else []:
            print(f"  {problem.get('message', problem)}", file=err)
        suggested = body.get("suggested") if isinstance(body, dict) else None
        if suggested:
            print(
                "suggested mapping:", json.dumps(suggested.get("mapping", {}), indent=1), file=err
            )
        return FAILED
    _tell(answer.json()["data"], out)
    return OK


def _followed(
    options: ImportOptions,
    started: httpx.Response,
    headers: dict[str, str],
    auth: httpx.BasicAuth | None,
    err: IO[str],
) -> httpx.Response:
    """The answer of an import made apart: its work followed (a bar of its progress)
    until it ends, then its file (the answer, or the refusal's reasons)."""
    location = started.json()["meta"]["location"]
    headers = {k: v for k, v in headers.items() if k.lower() != "content-type"}
    deadline = time.monotonic() + FOLLOW_SECONDS
    with (
        told(location, "following the import at", "showing its progress"),
        httpx.Client(timeout=TIMEOUT, auth=auth, headers=headers) as client,
        tqdm(total=100, unit="%", file=err, disable=options.quiet, leave=False) as bar,
    ):
        while True:
            polled = client.get(location)
            if polled.status_code != 200:
                return polled
            work = polled.json()["data"]
            bar.update(int(work["progress"]) - bar.n)
            bar.set_description_str(str(work["message"])[:60])
            if work["status"] in ("DONE", "FAILED"):
                break
            if time.monotonic() > deadline:
                raise Refused(f"the import did not end in time; follow it at {location}", FAILED)
            time.sleep(POLL_SECONDS)
        if "file" not in work:
            return httpx.Response(500, json={"meta": {"message": work["message"]}})
        answer = client.get(work["file"])
        if work["status"] == "FAILED" and answer.status_code == 200:
            return httpx.Response(400, content=answer.content, headers=answer.headers)
        return answer


#: How often the work of an import made apart is asked how far it is, and for how long.
POLL_SECONDS = 0.5
FOLLOW_SECONDS = 3600.0


def _tell(data: dict[str, Any], out: IO[str]) -> None:
    """What the import did, or would do: made, updated, left."""
    by_type = ", ".join(f"{n} {key}" for key, n in sorted(data["byType"].items()))
    dry = data["dryRun"]
    print(
        f"{'would import' if dry else 'imported'} {data['items']} items"
        f"{f' ({by_type})' if by_type else ''} and {data['relationships']} relationships "
        f"into project {data['project']}",
        file=out,
    )
    updates = [
        f"{len(data['changed'])} changed",
        f"{len(data['moved'])} moved",
        f"{data['unchanged']} unchanged",
    ]
    if data["changed"] or data["moved"] or data["unchanged"]:
        print(
            f"{'would write' if dry else 'wrote'} {data['versions']} new versions of items "
            f"already there: {', '.join(updates)}",
            file=out,
        )
    for changed in data["changed"]:
        print(f"  changed {changed['identifier']} (item {changed['item']}): "
              f"{', '.join(changed['fields'])}", file=out)  # fmt: skip
    for moved in data["moved"]:
        print(f"  moved {moved['identifier']} (item {moved['item']})", file=out)
    files = data.get("files") or {}
    if any(files.values()):
        print(
            f"files: {files['attached']} {'would be ' if dry else ''}attached to "
            f"{files['links']} items, {files['replaced']} replaced, "
            f"{files['unchanged']} there already",
            file=out,
        )
    for reordered in data.get("reordered", []):
        parent = reordered["parent"]
        where = "the project's root" if parent is None else f"item {parent}"
        print(
            f"{'would put' if dry else 'put'} {reordered['children']} children of {where} "
            "in the document's order",
            file=out,
        )
    left, links = data["left"], data["relationshipsLeft"]
    if left or links:
        if not (data["deleted"] or data["relationshipsDeleted"]):
            what = "left as they are (--delete-left deletes them)"
        else:
            what = "would be deleted" if dry else "deleted"
        print(
            f"{len(left)} items and {len(links)} relationships the document no longer "
            f"holds: {what}",
            file=out,
        )
        for item in left:
            print(f"  item {item['item']} {item['globalId']}: {item['name']}", file=out)


def _send(
    options: ImportOptions,
    url: str,
    headers: dict[str, str],
    auth: httpx.BasicAuth | None,
    err: IO[str],
) -> httpx.Response:
    # Made apart, as a work: its progress is shown while the server imports.
    params = {"async": "true"}
    if options.dry_run:
        params["dryRun"] = "true"
    if options.delete_left:
        params["deleteLeft"] = "true"
    with (
        told(url, "the import to", f"reading {options.file}"),
        httpx.Client(timeout=IMPORT_TIMEOUT, auth=auth) as client,
    ):
        if options.mapping is not None:
            mapping = options.mapping.read_bytes()
            with options.file.open("rb") as document:
                parts: dict[str, tuple[str, IO[bytes] | bytes, str]] = {
                    "file": (options.file.name, document, "application/octet-stream"),
                    "mapping": (options.mapping.name, mapping, "application/json"),
                }
                return client.post(url, params=params, headers=headers, files=parts)
        with options.file.open("rb") as document:
            upload = Upload(document, os.fstat(document.fileno()).st_size, err, options.quiet)
            try:
                headers["Content-Type"] = "application/octet-stream"
                return client.post(url, params=params, headers=headers, content=iter(upload))
            finally:
                upload.close()
