"""The domain error hierarchy and how it crosses gRPC and HTTP.

    PlumblineError
    ├── InvalidArgument       bad input: 400
    │   └── AlreadyExists     a unique name or key is taken: 400 ("already exists")
    ├── FailedPrecondition    the request is valid but the state forbids it: 400
    ├── NotFound              nothing at that id: 404
    ├── Unauthenticated       no or wrong credentials: 401
    ├── PermissionDenied      authenticated, but not allowed: 401 (the contract has no 403)
    ├── MethodNotAllowed      wrong HTTP method: 405
    ├── TooLarge              a body or file over its limit: 413
    ├── Unprocessable         well formed, but not what its key stood for: 422
    ├── Throttled             queue full or timed out: 429
    ├── Unavailable           a dependency is down: 503
    └── Internal              a fault of ours: 500

Services raise these, and the gRPC layer answers with the error's ``grpc_code``; a client
turns the status code back into the error (``from_grpc``), and the gateway answers with
its ``http_status``. ``GRPC_CODES`` and ``HTTP_STATUS`` tabulate the same mapping for the
tests. Messages are sentences for users.
"""

from __future__ import annotations

import grpc


class PlumblineError(Exception):
    """Base of every error that is meant to reach a client."""

    http_status = 500
    grpc_code = grpc.StatusCode.INTERNAL

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidArgument(PlumblineError):
    """The request is malformed or a value is out of range."""

    http_status = 400
    grpc_code = grpc.StatusCode.INVALID_ARGUMENT


class AlreadyExists(InvalidArgument):
    """A unique value is already taken."""

    grpc_code = grpc.StatusCode.ALREADY_EXISTS


class FailedPrecondition(PlumblineError):
    """The request is well formed but the current state does not allow it."""

    http_status = 400
    grpc_code = grpc.StatusCode.FAILED_PRECONDITION


class NotFound(PlumblineError):
    """No record at that id."""

    http_status = 404
    grpc_code = grpc.StatusCode.NOT_FOUND


class Unauthenticated(PlumblineError):
    """Credentials are missing, wrong, expired or belong to an inactive user."""

    http_status = 401
    grpc_code = grpc.StatusCode.UNAUTHENTICATED


class PermissionDenied(PlumblineError):
    """The caller is known but may not do this (the contract answers 401)."""

    http_status = 401
    grpc_code = grpc.StatusCode.PERMISSION_DENIED


class MethodNotAllowed(PlumblineError):
    """The resource exists but not with this HTTP method."""

    http_status = 405
    grpc_code = grpc.StatusCode.UNIMPLEMENTED


class TooLarge(PlumblineError):
    """A body or file over its limit; the message says the limit."""

    http_status = 413
    grpc_code = grpc.StatusCode.OUT_OF_RANGE


def size_text(limit: int) -> str:
    """A size limit as people read it: ``8388608 bytes (8 MiB)``."""
    shown = f"{limit} bytes"
    return shown + (f" ({limit / 2**20:g} MiB)" if limit >= 2**20 else "")


class Unprocessable(PlumblineError):
    """Well formed, but at odds with what the request's key already stands for (an
    Idempotency-Key used for another report)."""

    http_status = 422
    grpc_code = grpc.StatusCode.ABORTED


class Throttled(PlumblineError):
    """Too many requests in flight, or too many failed logins; ``retry_after`` seconds."""

    http_status = 429
    grpc_code = grpc.StatusCode.RESOURCE_EXHAUSTED

    def __init__(self, message: str, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Unavailable(PlumblineError):
    """A service this request needs cannot be reached."""

    http_status = 503
    grpc_code = grpc.StatusCode.UNAVAILABLE


class Internal(PlumblineError):
    """A fault of ours; the message never carries details."""


_ERRORS: tuple[type[PlumblineError], ...] = (
    InvalidArgument,
    AlreadyExists,
    FailedPrecondition,
    NotFound,
    Unauthenticated,
    PermissionDenied,
    MethodNotAllowed,
    TooLarge,
    Unprocessable,
    Throttled,
    Unavailable,
    Internal,
)

#: Domain error to gRPC status code.
GRPC_CODES: dict[type[PlumblineError], grpc.StatusCode] = {e: e.grpc_code for e in _ERRORS}

#: gRPC status code back to the domain error (and so to its HTTP status).
FROM_GRPC: dict[grpc.StatusCode, type[PlumblineError]] = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgument,
    grpc.StatusCode.ALREADY_EXISTS: AlreadyExists,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPrecondition,
    grpc.StatusCode.OUT_OF_RANGE: TooLarge,
    grpc.StatusCode.ABORTED: Unprocessable,
    grpc.StatusCode.NOT_FOUND: NotFound,
    grpc.StatusCode.UNAUTHENTICATED: Unauthenticated,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDenied,
    grpc.StatusCode.UNIMPLEMENTED: MethodNotAllowed,
    grpc.StatusCode.RESOURCE_EXHAUSTED: Throttled,
    grpc.StatusCode.UNAVAILABLE: Unavailable,
    grpc.StatusCode.DEADLINE_EXCEEDED: Unavailable,
}

#: gRPC status code to HTTP status.
HTTP_STATUS: dict[grpc.StatusCode, int] = {
    code: error.http_status for code, error in FROM_GRPC.items()
}


def from_grpc(code: grpc.StatusCode, message: str) -> PlumblineError:
    """The domain error for a gRPC failure; unknown codes become ``Internal``."""
    error = FROM_GRPC.get(code)
    if error is None:
        return Internal("The server could not complete the request.")
    return error(message)
