"""The module table: what each target is and what it must start after.

Dependencies only order modules that share a process (the gateway starts after the
services it fronts); a target never pulls another service into its process, since
services reach each other over gRPC.
"""

from __future__ import annotations

from collections.abc import Callable

from plumbline.common.errors import InvalidArgument
from plumbline.common.settings import SERVICES
from plumbline.runtime import Module


def _identity() -> Module:
    from plumbline.services.identity.module import IdentityModule

    return IdentityModule()


def _items() -> Module:
    from plumbline.services.items.module import ItemsModule

    return ItemsModule()


def _testmgmt() -> Module:
    from plumbline.services.testmgmt.module import TestmgmtModule

    return TestmgmtModule()


def _attachments() -> Module:
    from plumbline.services.attachments.module import AttachmentsModule

    return AttachmentsModule()


def _activity() -> Module:
    from plumbline.services.activity.module import ActivityModule

    return ActivityModule()


def _baselines() -> Module:
    from plumbline.services.baselines.module import BaselinesModule

    return BaselinesModule()


def _hooks() -> Module:
    from plumbline.services.hooks.module import HooksModule

    return HooksModule()


def _reports() -> Module:
    from plumbline.services.reports.module import ReportsModule

    return ReportsModule()


def _trace() -> Module:
    from plumbline.services.items.tracemodule import TraceModule

    return TraceModule()


def _gateway() -> Module:
    from plumbline.gateway.module import GatewayModule

    return GatewayModule()


#: What activity, baselines and hooks start after in one process: the services whose events
#: they read.
_PUBLISHERS = ("identity", "items", "testmgmt", "attachments")

#: target -> (factory, targets it starts after when they share the process)
MODULES: dict[str, tuple[Callable[[], Module], tuple[str, ...]]] = {
    "identity": (_identity, ()),
    "items": (_items, ()),
    "testmgmt": (_testmgmt, ("identity", "items")),
    "attachments": (_attachments, ("identity", "items")),
    "activity": (_activity, _PUBLISHERS),
    "baselines": (_baselines, _PUBLISHERS),
    "hooks": (_hooks, _PUBLISHERS),
    "reports": (_reports, ("identity",)),
    "trace": (_trace, ("identity", "items")),
    "gateway": (_gateway, (*SERVICES, "trace")),
}

#: Targets that are not services of their own but serve a part of one apart from it
#: (``trace``: items' traceability reads, decision 0030); ``all`` leaves them to the
#: service they are part of.
APART = ("trace",)
#: What ``--target all`` runs.
ALL = tuple(name for name in MODULES if name not in APART)


def resolve(spec: str) -> tuple[str, ...]:
    """``all`` or a comma list, validated and put in start order."""
    names = [n.strip() for n in spec.split(",") if n.strip()]
    if not names:
        raise InvalidArgument("--target needs at least one target")
    wanted: set[str] = set()
    for name in names:
        if name == "all":
            wanted.update(ALL)
        elif name in MODULES:
            wanted.add(name)
        else:
            raise InvalidArgument(
                f"unknown target {name!r}; targets are: all, {', '.join(MODULES)}"
            )
    ordered: list[str] = []

    def visit(name: str) -> None:
        if name in ordered:
            return
        for dep in MODULES[name][1]:
            if dep in wanted:
                visit(dep)
        ordered.append(name)

    for name in MODULES:
        if name in wanted:
            visit(name)
    return tuple(ordered)
