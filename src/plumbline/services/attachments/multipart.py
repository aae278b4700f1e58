"""The two S3 calls obstore does not make: ListMultipartUploads and AbortMultipartUpload.

A put that is cut off by a crash leaves its multipart upload open: its parts stay in the
bucket, listed by no ``ListObjects``, until the upload is aborted. The sweep finds such
uploads and aborts them. Requests go path-style to the store's endpoint (as obstore's do),
signed with AWS Signature Version 4 with an access key: the ``s3_*`` settings, or the
``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` / ``AWS_SESSION_TOKEN`` environment.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import hmac
import os
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from urllib.parse import quote, unquote, urlsplit

_EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
_TIMEOUT = 30.0


@dataclass(frozen=True)
class Upload:
    """A multipart upload begun and neither completed nor aborted."""

    key: str
    upload_id: str
    initiated: dt.datetime


@dataclass(frozen=True)
class Credentials:
    """An S3 access key."""

    access_key_id: str
    secret_access_key: str = field(repr=False)
    session_token: str | None = field(default=None, repr=False)

    @classmethod
    def given_or_env(
        cls, access_key_id: str | None, secret_access_key: str | None
    ) -> Credentials | None:
        """The key given, else the ``AWS_*`` environment's; None when neither has one
        (an instance role, say, which only obstore can use)."""
        if access_key_id and secret_access_key:
            return cls(access_key_id, secret_access_key)
        env_id, env_secret = (
            os.environ.get("AWS_ACCESS_KEY_ID"),
            os.environ.get("AWS_SECRET_ACCESS_KEY"),
        )
        if env_id and env_secret:
            return cls(env_id, env_secret, os.environ.get("AWS_SESSION_TOKEN") or None)
        return None


def _encode(value: str) -> str:
    return quote(value, safe="-_.~")


def signed_headers(
    method: str,
    url: str,
    region: str,
    credentials: Credentials,
    now: dt.datetime | None = None,
) -> dict[str, str]:
    """The headers that sign a request with an empty body (AWS Signature Version 4):
    ``x-amz-*`` and ``Authorization``. The URL's path must be encoded as it is sent."""
    parts = urlsplit(url)
    stamp = (now or dt.datetime.now(dt.UTC)).strftime("%Y%m%dT%H%M%SZ")
    day = stamp[:8]
    headers = {
        "host": parts.netloc,
        "x-amz-content-sha256": _EMPTY_SHA256,
        "x-amz-date": stamp,
    }
    if credentials.session_token:
        headers["x-amz-security-token"] = credentials.session_token
    pairs = sorted(
        (_encode(unquote(name)), _encode(unquote(value)))
        for name, _, value in (p.partition("=") for p in parts.query.split("&") if p)
    )
    names = ";".join(sorted(headers))
    canonical = "\n".join(
        [
            method,
            parts.path or "/",
            "&".join(f"{name}={value}" for name, value in pairs),
            *(f"{name}:{headers[name]}" for name in sorted(headers)),
            "",
            names,
            _EMPTY_SHA256,
        ]
    )
    scope = f"{day}/{region}/s3/aws4_request"
    to_sign = "\n".join(
        ["AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()]
    )
    key = ("AWS4" + credentials.secret_access_key).encode()
    for part in (day, region, "s3", "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    headers["authorization"] = (
        f"AWS4-HMAC-SHA256 Credential={credentials.access_key_id}/{scope}, "
        f"SignedHeaders={names}, Signature={signature}"
    )
    del headers["host"]  # urllib sends it, from the URL
    return headers


def _local_name(tag: str) -> str:
    return tag.rpartition("}")[2]


def _child(element: ET.Element, name: str) -> str:
    for child in element:
        if _local_name(child.tag) == name:
            return child.text or ""
    return ""


class MultipartUploads:
    """A bucket's incomplete multipart uploads: listed by key prefix, aborted one by one."""

    def __init__(
        self, endpoint: str | None, bucket: str, region: str, credentials: Credentials
    ) -> None:
        base = endpoint or f"https://s3.{region}.amazonaws.com"
        self._base = base.rstrip("/") + "/" + _encode(bucket)
        self._region = region
        self._credentials = credentials

    async def list(self, prefix: str, page: int = 1000) -> list[Upload]:
        """Every incomplete upload of a key that starts with ``prefix``, ``page`` a request."""
        found: dict[str, Upload] = {}
        markers: dict[str, str] = {}
        while True:
            query = {"uploads": "", "prefix": prefix, "max-uploads": str(page), **markers}
            root = ET.fromstring(await self._call("GET", "", query))
            before = len(found)
            for element in root:
                if _local_name(element.tag) == "Upload":
                    initiated = dt.datetime.fromisoformat(_child(element, "Initiated"))
                    upload = Upload(_child(element, "Key"), _child(element, "UploadId"), initiated)
                    found[upload.upload_id] = upload
            # AWS goes on from both markers; SeaweedFS gives and takes the upload id's alone.
            markers = {
                name: value
                for name, tag in (
                    ("key-marker", "NextKeyMarker"),
                    ("upload-id-marker", "NextUploadIdMarker"),
                )
                if (value := _child(root, tag))
            }
            truncated = _child(root, "IsTruncated").lower() == "true"
            if not truncated or not markers or len(found) == before:
                return sorted(found.values(), key=lambda u: (u.key, u.initiated))

    async def abort(self, key: str, upload_id: str) -> None:
        """Aborts the upload, which removes its parts; one already gone is not an error."""
        await self._call("DELETE", key, {"uploadId": upload_id}, missing_ok=True)

    async def _call(
        self, method: str, key: str, query: dict[str, str], *, missing_ok: bool = False
    ) -> bytes:
        path = "/".join(_encode(segment) for segment in key.split("/")) if key else ""
        url = self._base + (f"/{path}" if path else "") + "?"
        url += "&".join(f"{_encode(k)}={_encode(v)}" if v else _encode(k) for k, v in query.items())
        headers = signed_headers(method, url, self._region, self._credentials)
        request = urllib.request.Request(url, method=method, headers=headers)

        def send() -> bytes:
            try:
                with urllib.request.urlopen(request, timeout=_TIMEOUT) as answer:
                    return bytes(answer.read())
            except urllib.error.HTTPError as error:
                if missing_ok and error.code == 404:
                    return b""
                detail = error.read()[:300].decode("utf-8", "replace")
                raise OSError(f"S3 {method} {url}: HTTP {error.code} {detail}") from None

        return await asyncio.to_thread(send)
