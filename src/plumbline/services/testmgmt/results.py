"""Results from CI in one call: a JUnit XML report applied to a cycle's runs.

Each ``<testcase>`` is matched to the cycle's runs of one test case: first by the
references in its properties (``junit.REFERENCE_PROPERTIES``: a test case's document key,
global id or numeric id), else by the run's exact name. Every run of that test case in
the cycle (one per test group that holds it) gets the case's status as its
``testRunStatus`` (each of its steps gets that status, since a run with steps takes its
status from them) and the case's messages and output as its ``actualResults``. A test
case reported twice keeps the later result.

The whole report is one transaction. With an idempotency key, the answer is stored in
that transaction with the report's SHA-256; the same key with the same report answers it
and changes nothing, with another report it is refused (an answer stored without a
digest, before it was kept, stands for any report).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from plumbline.common.access import Action
from plumbline.common.dates import utcnow
from plumbline.common.errors import AlreadyExists, InvalidArgument, Unprocessable
from plumbline.common.rpc import dataclass_of
from plumbline.services.testmgmt import junit, store
from plumbline.services.testmgmt.models import ingests, records
from plumbline.services.testmgmt.runs import Runs
from plumbline.services.testmgmt.store import CYCLE, RUN

MAX_KEY = 200


@dataclass
class Match:
    """A report's case and the run it set."""

    name: str
    classname: str
    test_run: int
    test_case: int
    document_key: str
    matched_by: str
    status: str
    summary: str


@dataclass
class Unmatched:
    """A report's case no run answers to."""

    name: str
    classname: str
    references: list[str]
    status: str


@dataclass
class Answer:
    """What an ingest did."""

    test_cycle: int
    test_cases: int
    matched: list[Match] = field(default_factory=list)
    unmatched: list[Unmatched] = field(default_factory=list)
    replayed: bool = False

    def to_json(self) -> str:
        """The stored form."""
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Answer:
        """The stored form read back, marked as a replay."""
        return replace(dataclass_of(json.loads(text), cls), replayed=True)


class Results(store.Domain):
    """JUnit reports applied to test cycles."""

    def __init__(self, runs: Runs) -> None:
        super().__init__(runs.db, runs.outbox, runs.items, runs.access)
        self.runs = runs

    async def ingest(self, cycle_id: int, key: str, chunks: AsyncIterator[bytes]) -> Answer:
        """Parses the report as it arrives and records its results in the cycle's runs."""
        if len(key) > MAX_KEY:
            raise InvalidArgument(f"Idempotency-Key must be at most {MAX_KEY} characters.")
        access = await self.access.current()
        async with self.db.read() as session:
            await store.load(session, cycle_id, CYCLE, access, Action.EXECUTE)
        digest = hashlib.sha256()
        cases = await junit.parse_async(_hashed(chunks, digest))
        report = digest.hexdigest()
        if key:
            async with self.db.read() as session:
                stored = await self._stored(session, cycle_id, key, report)
            if stored is not None:
                return stored
        async with self.db.read() as session:
            runs = (
                await session.execute(
                    select(records.c.id, records.c.test_case, records.c.fields_json).where(
                        records.c.kind == RUN, records.c.cycle == cycle_id
                    )
                )
            ).all()
        test_cases = await self.items.test_cases(sorted({r.test_case for r in runs}))
        index = _Index(runs, test_cases)
        answer = Answer(cycle_id, len(cases))
        updates: dict[int, dict[str, Any]] = {}
        for case in cases:
            found = index.match(case)
            if found is None:
                answer.unmatched.append(
                    Unmatched(case.name, case.classname, junit.references(case), case.status)
                )
                continue
            test_case, run_ids, how = found
            summary = case.message.splitlines()[0][:200] if case.message else ""
            for run_id in run_ids:
                updates[run_id] = {
                    "testRunStatus": case.status,
                    "actualResults": case.message,
                    # A run with steps takes its status from them: each step gets the case's.
                    "testRunSteps": [{"status": case.status}] * index.steps[run_id],
                }
                answer.matched.append(
                    Match(
                        case.name,
                        case.classname,
                        run_id,
                        test_case,
                        index.keys.get(test_case, ""),
                        how,
                        case.status,
                        summary,
                    )
                )
        try:
            async with self.outbox.transaction() as session:
                await store.load(session, cycle_id, CYCLE, access, Action.EXECUTE, for_update=True)
                await self.runs.record(session, access, list(updates.items()), single=True)
                if key:
                    await session.execute(
                        ingests.insert().values(
                            key=f"{cycle_id}:{key}",
                            cycle=cycle_id,
                            answer_json=answer.to_json(),
                            created_at=utcnow(),
                            digest=report,
                        )
                    )
        except IntegrityError:
            # The same key, at the same moment: the first one's answer stands.
            async with self.db.read() as session:
                stored = await self._stored(session, cycle_id, key, report)
            if stored is None:
                raise AlreadyExists(f"Idempotency-Key {key!r} is in use.") from None
            return stored
        return answer

    @staticmethod
    async def _stored(session: Any, cycle_id: int, key: str, digest: str) -> Answer | None:
        """The answer stored for ``key``, when it was for the same report."""
        row = (
            await session.execute(
                select(ingests.c.answer_json, ingests.c.digest).where(
                    ingests.c.key == f"{cycle_id}:{key}"
                )
            )
        ).first()
        if row is None:
            return None
        if row.digest is not None and row.digest != digest:
            raise Unprocessable(
                f"Idempotency-Key {key!r} was used for another report to this test cycle; "
                "send a new key with a new report (the same key only with the same report)."
            )
        return Answer.from_json(row.answer_json)


async def _hashed(chunks: AsyncIterator[bytes], digest: Any) -> AsyncIterator[bytes]:
    """``chunks``, each added to ``digest`` as it passes."""
    async for chunk in chunks:
        digest.update(chunk)
        yield chunk


class _Index:
    """A cycle's runs by what a report may call their test case."""

    def __init__(self, runs: Any, test_cases: dict[int, Any]) -> None:
        self.by_case: dict[int, list[int]] = {}
        self.by_name: dict[str, int] = {}
        self.steps: dict[int, int] = {}
        for run in runs:
            self.by_case.setdefault(run.test_case, []).append(run.id)
            fields = json.loads(run.fields_json)
            self.steps[run.id] = len(fields.get("testRunSteps") or [])
            name = fields.get("name")
            if isinstance(name, str):
                self.by_name.setdefault(name, run.test_case)
        self.keys = {c.id: c.document_key for c in test_cases.values()}
        self.by_reference: dict[str, int] = {}
        for case_id in self.by_case:
            self.by_reference[str(case_id)] = case_id
            found = test_cases.get(case_id)
            if found is not None:
                self.by_reference[found.document_key.lower()] = case_id
                self.by_reference[found.global_id.lower()] = case_id

    def match(self, case: junit.Case) -> tuple[int, list[int], str] | None:
        """(test case, its runs, how) for a report's case, or None."""
        for name, reference in junit.named_references(case):
            test_case = self.by_reference.get(reference.lower())
            if test_case is not None:
                return test_case, self.by_case[test_case], f"property {name}={reference}"
        test_case = self.by_name.get(case.name)
        if test_case is not None:
            return test_case, self.by_case[test_case], "name"
        return None
