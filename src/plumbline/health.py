"""Every process's HTTP basics: liveness, readiness, Prometheus metrics."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import FastAPI
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest


@dataclass
class ProcessState:
    """Flipped by the runner: ready once every module is up, not ready while draining."""

    ready: bool = False
    targets: tuple[str, ...] = ()


def base_app(state: ProcessState) -> FastAPI:
    """The HTTP app every process serves; the gateway adds the API to it."""
    app = FastAPI(
        title="Plumbline",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> JSONResponse:
        return JSONResponse({"status": "ok"})

    @app.get("/readyz", include_in_schema=False)
    async def readyz() -> JSONResponse:
        if state.ready:
            return JSONResponse({"status": "ready", "targets": list(state.targets)})
        return JSONResponse({"status": "not ready"}, status_code=503)

    @app.get("/metrics", include_in_schema=False)
    async def metrics() -> Response:
        return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    return app
