"""The stack's own limit: the same HTTP stack reading the same row, nothing else.

uvicorn and FastAPI, one SQLAlchemy read of an items row by primary key from the same
database the items service uses, returned as JSON: no auth, no gRPC, no envelope.
"""

from __future__ import annotations

import argparse
import asyncio
import json

import orjson
import uvicorn
from fastapi import FastAPI
from sqlalchemy import select
from starlette.responses import Response

from plumbline.common.db import Database
from plumbline.services.items.models import items


def app_for(url: str) -> FastAPI:
    """The bare app reading ``url``."""
    db = Database(url)
    app = FastAPI()

    @app.get("/bare/items/{item_id}")
    async def bare(item_id: int) -> Response:
        async with db.read() as session:
            row = (await session.execute(select(items).where(items.c.id == item_id))).first()
        if row is None:
            return Response(status_code=404)
        body = {
            "id": row.id,
            "documentKey": row.document_key,
            "fields": json.loads(row.fields_json),
        }
        return Response(orjson.dumps(body), media_type="application/json")

    return app


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    config = uvicorn.Config(
        app_for(args.database_url), port=args.port, log_level="warning", access_log=False
    )
    asyncio.run(uvicorn.Server(config).serve())


if __name__ == "__main__":
    main()
