"""One settings object for every process, read from ``PLUMBLINE_*`` variables."""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

#: The gRPC services, in start order: every module but the gateway.
SERVICES = (
    "identity",
    "items",
    "testmgmt",
    "attachments",
    "activity",
    "baselines",
    "hooks",
    "reports",
)


class Settings(BaseSettings):
    """Process configuration. Every field is ``PLUMBLINE_<NAME>`` in the environment."""

    model_config = SettingsConfigDict(env_prefix="PLUMBLINE_", extra="ignore")

    host: str | None = Field(
        default=None,
        description="Bind address; 127.0.0.1 for --target all, 0.0.0.0 otherwise.",
    )
    http_port: int = 8080
    grpc_port: int = 9090
    data_dir: Path = Path(".data")
    database_url: str | None = Field(
        default=None,
        description=(
            "Database URL for every service; '{service}' is replaced by the service name. "
            "Default: sqlite+aiosqlite:///<data dir>/<service>.db. "
            "PLUMBLINE_<SERVICE>_DATABASE_URL overrides it for one service."
        ),
    )
    db_pool_size: int = Field(
        default=10,
        ge=1,
        le=200,
        description=(
            "PostgreSQL connections each service keeps open per process (its pool); "
            "PostgreSQL's max_connections must allow for every process's."
        ),
    )
    db_max_overflow: int = Field(
        default=10,
        ge=0,
        le=200,
        description="Connections a service may open beyond its pool under load, closed after.",
    )
    bus_url: str = "memory://"
    bus_stream: str = "PLUMBLINE"
    bus_subject_prefix: str = "plumbline"
    event_partitions: int = Field(
        default=1,
        ge=1,
        le=64,
        description=(
            "How many partitions the activity feed's and the history's consumers split "
            "events into (by project), so that several replicas of each share them. "
            "The same in every process of a deployment; change it only once the "
            "consumers have caught up (docs/operations.md)."
        ),
    )
    consumer_lease_seconds: float = Field(
        default=10.0,
        gt=2.0,
        le=300.0,
        description=(
            "How long a consumer replica's hold on its partitions lasts without renewal: "
            "after a replica dies, others take its partitions over within this."
        ),
    )
    identity_addr: str | None = None
    items_addr: str | None = None
    activity_addr: str | None = None
    testmgmt_addr: str | None = None
    attachments_addr: str | None = None
    baselines_addr: str | None = None
    hooks_addr: str | None = None
    reports_addr: str | None = None
    trace_addr: str | None = Field(
        default=None,
        description=(
            "Where the gateway finds items' traceability reads (traces, coverage, impact) "
            "when a trace target serves them apart from the items service (decision "
            "0030); unset, the items service answers them."
        ),
    )
    gateway_url: str | None = Field(
        default=None,
        description=(
            "The REST API's base URL inside the deployment (http://gateway:8080), for "
            "calls a service makes as a user: hooks reads a changed record as a webhook's "
            "owner, reports reads a report's data as whoever asked for it. Default: the "
            "process's own, embedded."
        ),
    )
    admin_password: str | None = None
    token_ttl: int = 3600
    tenant: str = "default"
    auth_cache_ttl: float = 60.0
    access_cache_ttl: float = Field(
        default=300.0,
        gt=0,
        description=(
            "Seconds a process keeps a user's project roles; identity's events drop them "
            "sooner, this bounds the staleness should an event be missed."
        ),
    )
    throttle_concurrency: int = Field(
        default=64,
        ge=1,
        description=(
            "The most API requests in flight per gateway process: the ceiling of the "
            "adaptive limit, which follows the measured latency below it."
        ),
    )
    throttle_latency: float = Field(
        default=0.25,
        gt=0,
        description=(
            "Seconds of handling (to the answer's first byte) the adaptive limit aims "
            "for: it shrinks while the recent average is over it, or over twice its "
            "long-run average, and grows otherwise."
        ),
    )
    throttle_queue: int = Field(
        default=512,
        ge=0,
        description=(
            "The most API requests waiting per gateway process; fewer wait when the "
            "measured drain rate would not serve them within throttle_queue_delay."
        ),
    )
    throttle_queue_delay: float = Field(
        default=0.1,
        gt=0,
        description=(
            "Seconds an API request should wait for a place at most: the queue holds what "
            "the measured drain rate serves within it, and while its oldest waiter has "
            "waited longer, new requests are refused at once (429)."
        ),
    )
    throttle_timeout: float = Field(
        default=10.0,
        gt=0,
        description=(
            "The wait limit: the longest an API request waits for a slot (a client that "
            "comes back before its Retry-After waits out the rest first, counted in it); "
            "Retry-After is never longer."
        ),
    )
    transfer_concurrency: int = Field(
        default=256,
        ge=1,
        description=(
            "Transfers (attachment uploads and downloads, JUnit reports) at once per gateway; "
            "they take no API slot. One more answers 429."
        ),
    )
    transfer_per_user: int = Field(
        default=4,
        ge=1,
        description=(
            "Uploads and JUnit reports one user may be sending at once per gateway; one "
            "more answers 429."
        ),
    )
    transfer_min_rate: int = Field(
        default=1024,
        ge=0,
        description=(
            "Bytes a second an upload or a JUnit report must arrive at, on average over "
            "transfer_rate_window seconds; a slower one answers 408 and its connection is "
            "closed. 0: no minimum (body_timeout still applies between pieces)."
        ),
    )
    transfer_rate_window: float = Field(
        default=30.0,
        gt=0,
        description="Seconds over which transfer_min_rate is measured.",
    )
    grpc_timeout: float = Field(
        default=30.0,
        gt=0,
        description=(
            "Deadline, seconds, of a call between services. A transfer's calls have none: "
            "they last as long as their pieces keep coming (body_timeout apart at most)."
        ),
    )
    body_timeout: float = Field(
        default=10.0,
        gt=0,
        description=(
            "Seconds an API request's whole body may take to arrive after its headers; "
            "a slower one answers 408 and its connection is closed. A file upload may "
            "take longer, but no more than this between two pieces of it."
        ),
    )
    header_timeout: float = Field(
        default=10.0,
        gt=0,
        description="Seconds a connection may take to send a request's headers before it "
        "is closed.",
    )
    login_failures_per_name: int = Field(
        default=5,
        ge=1,
        description="Failed logins in a row for one user name before the gateway refuses "
        "further attempts for a while (1 s, doubling up to login_block_max).",
    )
    login_failures_per_address: int = Field(
        default=20,
        ge=1,
        description="Failed logins in a row from one client address before it is refused "
        "likewise (higher: several users may share an address).",
    )
    login_block_max: float = Field(
        default=60.0,
        gt=0,
        description="Longest refusal, seconds, after repeated failed logins.",
    )
    max_body_bytes: int = Field(
        default=8 * 1024 * 1024,
        gt=0,
        description=(
            "Largest API request body, bytes; larger ones answer 413. The default fits a "
            "TEXT field's 1,000,000 characters even when a client escapes them as \\uXXXX."
        ),
    )
    max_report_bytes: int = Field(
        default=64 * 1024 * 1024,
        gt=0,
        description=(
            "Largest JUnit report (POST /rest/labs/testcycles/{id}/results), bytes; larger "
            "ones answer 413. Reports stream to the parser, past the API body limit."
        ),
    )
    max_import_bytes: int = Field(
        default=4 * 1024 * 1024 * 1024,
        gt=0,
        description=(
            "Largest bulk import (POST /rest/labs/projects/{id}/import), bytes; larger ones "
            "answer 413. An import streams to the items service, past the API body limit."
        ),
    )
    import_timeout: float = Field(
        default=3600.0,
        gt=0,
        description=(
            "Seconds the items service may take to write a bulk import after its last "
            "line arrived (a million items take minutes); past it the import is undone "
            "and answers 503."
        ),
    )
    workers: int | None = Field(
        default=None,
        ge=0,
        description=(
            "Gateway worker processes of the embedded default (--target all), which then "
            "serve the API beside the one process that runs the services; 0: that process "
            "serves everything. Default: one per usable core, at most 4, none on one core."
        ),
    )
    ready_file: Path | None = None
    log_level: str = "INFO"
    drain_seconds: float = 0.0
    migrate_on_start: bool = False
    consistency_wait: float = 3.0
    events_retention_days: float = Field(
        default=30.0,
        gt=0,
        description=(
            "Days the change feed (GET /rest/labs/events) keeps a change; a client whose "
            "cursor is older is told to start again."
        ),
    )
    webhooks_key: str | None = Field(
        default=None,
        repr=False,
        description=(
            "The key that seals webhook secrets in the hooks database (32 bytes, base64; "
            "from a Kubernetes Secret). Default: a key file made in the data directory "
            "on first use (the laptop default; a shared setup must set one key for all "
            "replicas). Never logged."
        ),
    )
    webhooks_allow_private: bool = Field(
        default=False,
        description=(
            "Whether webhook targets may resolve to loopback, private, link-local or "
            "other non-public addresses (refused by default: a subscription could "
            "otherwise reach the service's own network)."
        ),
    )
    webhooks_retry_hours: float = Field(
        default=24.0,
        gt=0,
        description=(
            "How long a webhook's failing deliveries are retried (backing off) before "
            "the subscription is disabled with the reason."
        ),
    )
    webhooks_retry_base: float = Field(
        default=5.0,
        gt=0,
        description=(
            "Seconds before a failed delivery's first retry; each next one waits twice "
            "as long (at most an hour), with jitter."
        ),
    )
    webhooks_timeout: float = Field(
        default=15.0,
        gt=0,
        description="Seconds a receiver has to answer a delivery before it counts as failed.",
    )
    webhooks_secret_grace_hours: float = Field(
        default=24.0,
        ge=0,
        description=(
            "After a webhook secret is rotated, how long deliveries are also signed "
            "with the old one, so receivers can switch."
        ),
    )
    reports_concurrency: int = Field(
        default=2,
        ge=1,
        le=64,
        description="How many reports one reports replica makes at once.",
    )
    reports_retention_days: float = Field(
        default=7.0,
        gt=0,
        description="How long a finished report's file is kept.",
    )
    reports_stale_seconds: float = Field(
        default=60.0,
        gt=1,
        description=(
            "A report whose maker has not reported progress for this long (its replica "
            "died) is queued again."
        ),
    )
    password_time_cost: int = 2
    password_memory_cost: int = 19456
    public_url: str | None = Field(
        default=None,
        description="Base URL used in links; default: from the request's Host when trusted.",
    )
    trusted_hosts: str = Field(
        default="",
        description=(
            "Host names (host or host:port, comma-separated) a request's Host header may "
            "name for links when no public URL is set; another Host gets the address the "
            "connection reached."
        ),
    )
    blob_url: str | None = Field(
        default=None,
        description=(
            "Where attachment files live: file:///absolute/dir, s3://bucket or "
            "s3://bucket/prefix. Default: file://<data dir>/files."
        ),
    )
    s3_endpoint: str | None = Field(
        default=None,
        description="S3 endpoint URL, e.g. http://127.0.0.1:8333; default: AWS.",
    )
    s3_region: str = Field(default="us-east-1", description="S3 region.")
    s3_access_key_id: str | None = Field(
        default=None,
        description="S3 access key id; default: the AWS_* environment or instance role.",
    )
    s3_secret_access_key: str | None = Field(
        default=None,
        repr=False,
        description="S3 secret access key; never logged.",
    )
    max_upload_bytes: int = Field(
        default=1024 * 1024 * 1024,
        gt=0,
        description="Largest attachment file, bytes; a larger upload answers 413.",
    )
    stale_upload_seconds: float = Field(
        default=24 * 3600.0,
        gt=0,
        description=(
            "Seconds an attachment upload may take: the sweep (at start and every 10 "
            "minutes) takes an upload older than this for a crash's leftover and removes "
            "what it stored, the partial file or multipart upload included."
        ),
    )

    def database_url_for(self, service: str) -> str:
        """The database URL of one service."""
        override = os.environ.get(f"PLUMBLINE_{service.upper()}_DATABASE_URL")
        if override:
            return override
        if self.database_url:
            return self.database_url.replace("{service}", service)
        return f"sqlite+aiosqlite:///{self.data_dir.resolve() / (service + '.db')}"

    def blob_url_resolved(self) -> str:
        """The blob store URL: ``blob_url``, or a ``files`` directory in the data dir."""
        if self.blob_url:
            return self.blob_url
        return (self.data_dir.resolve() / "files").as_uri()

    def address_of(self, service: str) -> str | None:
        """The configured gRPC address of a service, if any."""
        value: str | None = getattr(self, f"{service}_addr", None)
        return value

    @property
    def grpc_max_message_bytes(self) -> int:
        """The gRPC message limit between services (sending and receiving, both ends).

        Every body the API accepts must fit once the gateway has turned it into a message:
        re-encoded JSON can grow (``1e15`` becomes ``1000000000000000.0``, 4.5 times), so
        the limit is eight bodies. Replies carry pages of records and may still exceed it.
        """
        return 8 * self.max_body_bytes

    @cached_property
    def trusted_host_names(self) -> frozenset[str]:
        """``trusted_hosts`` as lower-case entries (``host`` or ``host:port``)."""
        return frozenset(h.strip().lower() for h in self.trusted_hosts.split(",") if h.strip())

    @cached_property
    def bus_is_memory(self) -> bool:
        """Whether the in-process bus is configured."""
        return self.bus_url.startswith("memory://")
