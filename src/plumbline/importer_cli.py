"""``plumbline import``: streams a JSON Lines file to a server's bulk import.

The server's contract (``POST /rest/labs/projects/{id}/import``, see docs/import.md): the
body is the file as it is read, the answer tells how many items and relationships were
written and the id of the first item; the k-th item line of the file (relationship lines
and blank lines not counted) got ``firstItemId + k``. An import is one transaction, so a
refused import wrote nothing.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

import httpx
from tqdm import tqdm

#: How much of the file goes out at a time.
CHUNK = 256 * 1024
#: The server answers only once every line is written: minutes for a million lines.
TIMEOUT = IMPORT_TIMEOUT = httpx.Timeout(connect=10, read=3600, write=60, pool=10)
DEFAULT_URL = "http://127.0.0.1:8080"

#: Exit codes: done; the server refused the import or could not be reached; usage.
OK, FAILED, USAGE = 0, 1, 2


@dataclass(frozen=True)
class Options:
    """What ``plumbline import`` was asked to do (environment defaults not yet applied)."""

    file: Path
    project: int
    url: str | None = None
    user: str | None = None
    password: str | None = None
    token: str | None = None
    ids: Path | None = None
    quiet: bool = False


class Refused(Exception):
    """A problem to tell the user in one line, with the exit code it means (shared with
    ``plumbline reqif``)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class Credentials(Protocol):
    """What a command was given to sign in with."""

    @property
    def token(self) -> str | None: ...
    @property
    def user(self) -> str | None: ...
    @property
    def password(self) -> str | None: ...


def auth_of(options: Credentials) -> tuple[dict[str, str], httpx.BasicAuth | None]:
    """The headers and the auth for the request: a bearer token, or user and password."""
    token = options.token or os.environ.get("PLUMBLINE_TOKEN")
    if token:
        return {"Authorization": f"Bearer {token}"}, None
    user = options.user or os.environ.get("PLUMBLINE_USER")
    password = options.password or os.environ.get("PLUMBLINE_PASSWORD")
    if user and password:
        return {}, httpx.BasicAuth(user, password)
    if user:
        raise Refused(f"no password for {user!r}: give --password or PLUMBLINE_PASSWORD", USAGE)
    raise Refused(
        "no credentials: give --token (or PLUMBLINE_TOKEN), or --user and --password "
        "(or PLUMBLINE_USER and PLUMBLINE_PASSWORD)",
        USAGE,
    )


class _Waiting:
    """Tells, once the upload is done, that the server is still writing (a long wait)."""

    def __init__(self, out: IO[str], quiet: bool) -> None:
        self.out = out
        self.quiet = quiet
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None

    def start(self, lines: int) -> None:
        if self.quiet:
            return
        text = (
            f"uploaded; the server is writing {count_of(lines, 'line')}..."
            if lines
            else ("uploaded; the server is importing...")
        )
        if not self.out.isatty():
            print(text, file=self.out, flush=True)
            return
        began = time.monotonic()

        def tick() -> None:
            while True:
                waited = time.monotonic() - began
                self.out.write(f"\r{text} {waited:.0f} s")
                self.out.flush()
                if self.stop.wait(1.0):
                    self.out.write("\n")
                    self.out.flush()
                    return

        self.thread = threading.Thread(target=tick, name="import-waiting", daemon=True)
        self.thread.start()

    def end(self) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join()


class Upload:
    """The request's body: the file in chunks, moving a progress bar as each is sent; once
    all is sent, tells that the server is still writing."""

    def __init__(self, stream: IO[bytes], size: int, out: IO[str], quiet: bool) -> None:
        self.stream = stream
        self.size = size
        self.out = out
        self.quiet = quiet
        self.bar: tqdm[Any] | None = None
        self.waiting = _Waiting(out, quiet)

    def __iter__(self) -> Iterator[bytes]:
        # Made only once connected: a refused connection shows no bar.
        self.bar = tqdm(
            total=self.size,
            unit="B",
            unit_scale=True,
            unit_divisor=1024,
            desc="uploading",
            file=self.out,
            disable=self.quiet,
        )
        lines = 0
        last = b"\n"
        while chunk := self.stream.read(CHUNK):
            lines += chunk.count(b"\n")
            last = chunk[-1:]
            yield chunk
            self.bar.update(len(chunk))
        self.bar.close()
        self.waiting.start(lines + (last != b"\n"))

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        self.waiting.end()


def error_text(answer: httpx.Response) -> tuple[str, list[str]]:
    """A refusal's message and its bad lines (``line N: message``), from the JSON answer."""
    try:
        body = answer.json()
    except ValueError:
        return answer.text.strip()[:300] or answer.reason_phrase, []
    if not isinstance(body, dict):
        return str(body)[:300], []
    meta = body.get("meta")
    message = meta.get("message") if isinstance(meta, dict) else None
    bad = []
    for error in body.get("errors") or []:
        if isinstance(error, dict):
            bad.append(f"line {error.get('line', '?')}: {error.get('message', '')}")
    return str(message or answer.reason_phrase), bad


def item_ids(file: Path, first: int) -> tuple[dict[str, int], int]:
    """Each keyed item line's new id (the k-th item line, from 0, got ``first + k``), and
    how many item lines there are.

    Item lines are those with ``itemType`` (blank, version and relationship lines are
    not); item lines without a ``key`` count but have no entry.
    """
    ids: dict[str, int] = {}
    k = 0
    with file.open("rb") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError as exc:
                raise Refused(f"line {number} of {file} is not JSON: {exc}", FAILED) from exc
            if not isinstance(record, dict):
                raise Refused(f"line {number} of {file} is not a JSON object", FAILED)
            if "itemType" not in record:
                continue
            key = record.get("key")
            if key is not None:
                ids[str(key)] = first + k
            k += 1
    return ids, k


def _write_ids(options: Options, data: dict[str, Any]) -> str:
    assert options.ids is not None
    first = data.get("firstItemId")
    try:
        ids, count = item_ids(options.file, int(first or 0))
    except Refused as exc:
        raise Refused(f"imported, but the ids were not written: {exc.message}", FAILED) from exc
    if count != int(data["items"]) or (count and first is None):
        raise Refused(
            f"imported, but the ids were not written: {options.file} has "
            f"{count_of(count, 'item line')}, the server wrote "
            f"{count_of(int(data['items']), 'item')} "
            "(was the file changed during the import?)",
            FAILED,
        )
    partial = options.ids.with_name(options.ids.name + ".partial")
    try:
        partial.write_text(json.dumps(ids, indent=1) + "\n", encoding="utf-8")
        partial.replace(options.ids)
    except OSError as exc:
        raise Refused(f"imported, but the ids were not written: {exc}", FAILED) from exc
    return f"wrote {count_of(len(ids), 'key')} and their ids to {options.ids}"


def count_of(n: int, thing: str) -> str:
    """``n`` ``thing``, plural when ``n`` is not 1."""
    return f"{n} {thing}{'' if n == 1 else 's'}"


def _summary(data: dict[str, Any], elapsed: float) -> str:
    items, relationships = int(data["items"]), int(data["relationships"])
    versions = int(data.get("versions", 0))
    rate = items / elapsed if elapsed > 0 else float(items)
    also = f", {count_of(versions, 'later version')}" if versions else ""
    text = (
        f"imported {count_of(items, 'item')}{also} and {count_of(relationships, 'relationship')} "
        f"into project {data['project']} in {elapsed:.1f} s ({rate:.0f} items/s)"
    )
    if items:
        first = int(data["firstItemId"])
        text += f"; item ids {first}-{first + items - 1}"
    return text


def _check_usage(options: Options) -> None:
    if not options.file.is_file():
        what = "is not a file" if options.file.exists() else "does not exist"
        raise Refused(f"{options.file} {what}", USAGE)
    if options.ids is not None and not options.ids.parent.is_dir():
        raise Refused(f"--ids {options.ids}: the folder {options.ids.parent} does not exist", USAGE)
    if options.project <= 0:
        raise Refused(f"--project {options.project}: a project id is a positive number", USAGE)


def _send(options: Options, url: str, out: IO[str]) -> tuple[httpx.Response, float]:
    """Streams the file; the server's answer and the seconds it took."""
    headers, auth = auth_of(options)
    headers["Content-Type"] = "application/x-ndjson"
    headers["Accept"] = "application/json"
    try:
        stream = options.file.open("rb")
    except OSError as exc:
        raise Refused(f"cannot read {options.file}: {exc.strerror or exc}", USAGE) from exc
    upload = Upload(stream, os.fstat(stream.fileno()).st_size, out, options.quiet)
    began = time.monotonic()
    try:
        with told(url, "the import to", f"reading {options.file}"):
            try:
                with stream, httpx.Client(timeout=TIMEOUT, auth=auth) as client:
                    answer = client.post(url, content=iter(upload), headers=headers)
            except httpx.ConnectTimeout as exc:
                raise Refused(
                    f"cannot connect to {url}: no answer in {TIMEOUT.connect} s", FAILED
                ) from exc
            except httpx.ReadTimeout as exc:
                raise Refused(
                    f"{url} did not answer within {TIMEOUT.read} s; the import may still "
                    "finish on the server (look at the project before importing again)",
                    FAILED,
                ) from exc
    finally:
        upload.close()
    return answer, time.monotonic() - began


@contextlib.contextmanager
def told(url: str, what: str, local: str) -> Iterator[None]:
    """What can go wrong talking to the server, or with the local file, as a ``Refused``
    to tell: ``what`` names the request ("the import to"), ``local`` the file's part
    ("reading spec.reqif")."""
    try:
        yield
    except httpx.ConnectError as exc:
        raise Refused(f"cannot connect to {url}: {exc}", FAILED) from exc
    except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
        raise Refused(f"--url: {exc}", USAGE) from exc
    except httpx.HTTPError as exc:
        raise Refused(f"{what} {url} failed: {type(exc).__name__}: {exc}", FAILED) from exc
    except OSError as exc:
        raise Refused(f"{local} failed: {exc}", FAILED) from exc


def endpoint(url: str | None, path: str) -> str:
    """``/rest/labs/<path>`` on the server (``url``, else PLUMBLINE_URL, else the default)."""
    # The commands tell what happened themselves: httpx's line per request is noise
    # here, whatever logging the process has (a test's, an embedding program's).
    logging.getLogger("httpx").setLevel(logging.WARNING)
    base = (url or os.environ.get("PLUMBLINE_URL") or DEFAULT_URL).rstrip("/")
    return f"{base}/rest/labs/{path}"


def run(options: Options, out: IO[str] | None = None, err: IO[str] | None = None) -> int:
    """Imports ``options.file`` into the project; the exit code."""
    out = out or sys.stdout
    err = err or sys.stderr
    url = endpoint(options.url, f"projects/{options.project}/import")
    try:
        _check_usage(options)
        answer, elapsed = _send(options, url, err)
        if answer.status_code != 200:
            message, bad = error_text(answer)
            status = f"{answer.status_code} {answer.reason_phrase}".strip()
            if bad:
                # The server names the first bad lines only; its message counts them all.
                counted = re.match(r"(\d+) lines? of the import", message)
                total = max(len(bad), int(counted.group(1)) if counted else 0)
                message = f"{count_of(total, 'bad line')}; nothing was imported"
                if total > len(bad):
                    message += f" (the first {len(bad)} follow)"
            print(f"plumbline: the server refused the import ({status}): {message}", file=err)
            for line in bad:
                print(f"  {line}", file=err)
            return FAILED
        try:
            data = answer.json()["data"]
            print(_summary(data, elapsed), file=out)
        except (ValueError, KeyError, TypeError) as exc:
            raise Refused(
                f"the server answered 200 but not as expected ({exc!r}): {answer.text[:300]}",
                FAILED,
            ) from exc
        if options.ids is not None:
            print(_write_ids(options, data), file=out)
    except Refused as exc:
        print(f"plumbline: {exc.message}", file=err)
        return exc.code
    return OK
