"""Reports (labs): what a project offers, and works (reports being made or made)."""

from __future__ import annotations

from typing import Any, Literal, NotRequired

# pydantic reads these TypedDicts for the schemas; before Python 3.12 it needs this one.
from typing_extensions import TypedDict


class ReportParameter(TypedDict):
    """A parameter of a report, as ``POST /reports/{reportId}`` takes it in
    ``parameters``."""

    name: str
    #: moment: a date-time, e.g. 2024-01-31T13:45:00.000+0000.
    type: Literal["integer", "integers", "choice", "moment"]
    required: bool
    description: str
    choices: NotRequired[list[str]]
    defaultValue: NotRequired[str]


class ReportMetadata(TypedDict):
    """A report a project offers."""

    id: str
    name: str
    description: str
    parameters: list[ReportParameter]
    formats: list[str]
    type: Literal["reports"]


class ReportWork(TypedDict):
    """A report asked for: where its making stands and, when DONE, its file (``file``
    is where to GET it); FAILED says why in ``message``."""

    workId: str
    report: str
    project: int
    format: str
    createdBy: int
    parameters: dict[str, Any]
    status: Literal["QUEUED", "RUNNING", "DONE", "FAILED"]
    #: Percent done.
    progress: int
    message: str
    createdDate: str
    startedDate: NotRequired[str]
    finishedDate: NotRequired[str]
    #: When the report's data was read: from the first read to the last.
    dataFrom: NotRequired[str]
    dataTo: NotRequired[str]
    fileName: NotRequired[str]
    mediaType: NotRequired[str]
    size: NotRequired[int]
    file: NotRequired[str]
    type: Literal["reportworks"]
