"""activity's data migrations: relationship activities recorded before ``0005x`` learn
their to-item's project from the feed's own activities about it."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

from alembic import command
from sqlalchemy import bindparam, select, text

from plumbline.common.db import Database
from plumbline.common.migrations import config_for, upgrade
from plumbline.services.activity.models import activities, project_activities


async def test_relationship_activities_recorded_before_learn_their_to_items_project(
    tmp_path: Path,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path}/activity.db"
    await asyncio.to_thread(command.upgrade, config_for("activity", url), "0004r")
    db = Database(url)
    try:
        rows = [
            # (id, project, object type, item, details)
            (1, 3, "ITEM", 20, "item Mine created"),
            (2, 9, "ITEM", 90, "item Theirs created"),
            (3, 4, "ITEM", 91, "item Moved created"),
            (4, 9, "ITEM", 91, "item Moved updated"),  # moved to 9 since
            (5, 3, "RELATIONSHIP", None, "relationship 20 to 90 created"),
            (6, 3, "RELATIONSHIP", None, "relationship 20 to 91 updated"),
            (7, 9, "RELATIONSHIP", None, "relationship 90 to 20 created"),
            (8, 9, "RELATIONSHIP", None, "relationship 90 to 91 created"),  # within 9
            (9, 3, "RELATIONSHIP", None, "relationship 20 to 555 created"),  # unknown end
            (10, 3, "COMMENT", 20, "relationship 20 to 90 created"),  # no relationship's
        ]
        async with db.transaction() as session:
            for id_, project, object_type, item, details in rows:
                await session.execute(
                    text(
                        "INSERT INTO activities (id, event_id, date, details, action, "
                        "user_comment, item, event_type, object_type, project, organization) "
                        "VALUES (:id, :event, :date, :details, 'Created', '', :item, "
                        "'CREATE', :object_type, :project, :no)"
                    ).bindparams(
                        # The column's type writes the date (sqlite3's own datetime
                        # adapter is deprecated since Python 3.12).
                        bindparam("date", type_=activities.c.date.type)
                    ),
                    {
                        "id": id_,
                        "event": f"event-{id_}",
                        "date": datetime(2024, 1, 1, tzinfo=UTC),
                        "details": details,
                        "item": item,
                        "object_type": object_type,
                        "project": project,
                        "no": False,
                    },
                )
        await upgrade("activity", url)
        async with db.read() as session:
            related = dict(
                (
                    await session.execute(
                        select(activities.c.id, activities.c.related_project).order_by(
                            activities.c.id
                        )
                    )
                ).all()
            )
        assert related == {
            1: None,
            2: None,
            3: None,
            4: None,
            5: 9,
            6: 9,
            7: 3,
            8: None,
            9: None,
            10: None,
        }
        # 0007t: each project's total, kept from then on, starts from its count.
        async with db.read() as session:
            kept: dict[int, int] = dict((await session.execute(select(project_activities))).all())
        assert kept == {3: 5, 4: 1, 9: 4}
    finally:
        await db.close()
