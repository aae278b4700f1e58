"""Users, user groups, permissions, organisation roles and API credentials."""

from __future__ import annotations

from typing import Literal, NotRequired

# pydantic reads these TypedDicts for the schemas; before Python 3.12 it needs this one.
from typing_extensions import TypedDict


class User(TypedDict):
    """A user."""

    id: int
    username: str
    firstName: str
    lastName: str
    email: str
    phone: str
    title: str
    location: str
    licenseType: str
    avatarUrl: str
    active: bool
    type: Literal["users"]


class UserGroup(TypedDict):
    """A user group; ``project`` only for a project's group."""

    id: int
    name: str
    description: str
    project: NotRequired[int]
    type: Literal["usergroups"]


class Permission(TypedDict):
    """A permission entry: a user or a user group has a role on a project or folder.

    Roles, weakest first: READ_ONLY (read), TEST_RUNNER (read, and record test results),
    READ_WRITE (read and change everything but permissions), PROJECT_ADMIN (also manage
    the project's permissions, and projects inside a folder).
    """

    id: int
    project: int
    user: NotRequired[int]
    userGroup: NotRequired[int]
    role: Literal["READ_ONLY", "TEST_RUNNER", "READ_WRITE", "PROJECT_ADMIN"]
    type: Literal["permissions"]


class ApiCredentials(TypedDict):
    """OAuth client credentials; the secret is shown in this response only."""

    id: int
    name: str
    clientId: str
    clientSecret: str
    user: int
    type: Literal["apicredentials"]


class ApiCredentialsInfo(TypedDict):
    """OAuth client credentials as listed: never the secret (labs)."""

    id: int
    name: str
    clientId: str
    user: int
    created: str
    type: Literal["apicredentials"]


class UserRoles(TypedDict):
    """A user's organisation roles: ORGANIZATION_ADMIN and USER_ADMIN (labs)."""

    user: int
    roles: list[str]
    type: Literal["userroles"]


class CrossOriginDomainWhiteList(TypedDict):
    """The origins browsers may call the API from (``/system/settings/corsdomains``)."""

    domains: list[str]
