"""The S3 calls obstore does not make, against a real S3 server (SeaweedFS)."""

from __future__ import annotations

import pytest

from plumbline.services.attachments.multipart import Credentials, MultipartUploads
from tests.seaweed import SeaweedFS
from tests.unit.services.attachments.conftest import StoreAt, crash_puts


def _uploads(weed: SeaweedFS, bucket: str, secret: str | None = None) -> MultipartUploads:
    credentials = Credentials(weed.access_key_id, secret or weed.secret_access_key)
    return MultipartUploads(weed.endpoint, bucket, weed.region, credentials)


async def test_uploads_are_listed_page_by_page_and_aborted(
    seaweedfs: SeaweedFS, bucket: str
) -> None:
    where = StoreAt(
        "s3",
        f"s3://{bucket}/paged",
        {
            "endpoint": seaweedfs.endpoint,
            "region": seaweedfs.region,
            "access_key_id": seaweedfs.access_key_id,
            "secret_access_key": seaweedfs.secret_access_key,
        },
    )
    keys = ["1/a", "1/b", "2/c"]
    crash_puts(where, keys, seaweedfs)
    uploads = _uploads(seaweedfs, bucket)
    found = await uploads.list("paged/", page=2)
    assert sorted(u.key for u in found) == [f"paged/{k}" for k in keys]
    assert [u.key for u in await uploads.list("paged/1/", page=1)] == ["paged/1/a", "paged/1/b"]
    assert await uploads.list("paged/3") == []
    for upload in found:
        await uploads.abort(upload.key, upload.upload_id)
    await uploads.abort(found[0].key, found[0].upload_id)  # aborted already
    assert await uploads.list("paged/") == []
    assert not [k for k in seaweedfs.multipart_uploads(bucket) if k.startswith("paged/")]


async def test_a_wrong_key_is_an_error(seaweedfs: SeaweedFS, bucket: str) -> None:
    with pytest.raises(OSError, match="HTTP 403"):
        await _uploads(seaweedfs, bucket, secret="not-the-secret").list("")


def test_credentials_given_then_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    assert Credentials.given_or_env(None, None) is None
    assert Credentials.given_or_env("id", None) is None
    assert Credentials.given_or_env("id", "secret") == Credentials("id", "secret")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "env-id")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "env-secret")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "env-token")
    assert Credentials.given_or_env("id", "secret") == Credentials("id", "secret")
    from_env = Credentials.given_or_env(None, None)
    assert from_env == Credentials("env-id", "env-secret", "env-token")
    assert "env-secret" not in repr(from_env)
    assert "env-token" not in repr(from_env)
