"""The ``plumbline`` command: runs Plumbline's services, does the operator's offline
chores (migrations, API credentials, the configuration) and bulk-imports a file."""

from __future__ import annotations

import argparse
import asyncio
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from plumbline.common.errors import PlumblineError
from plumbline.common.logs import setup as setup_logging
from plumbline.common.settings import SERVICES, Settings
from plumbline.modules import MODULES, resolve


def _settings(args: argparse.Namespace) -> Settings:
    overrides = {}
    for name in ("http_port", "grpc_port", "data_dir", "ready_file"):
        value = getattr(args, name, None)
        if value is not None:
            overrides[name] = value
    return Settings(**overrides)


def _tell_database(settings: Settings, service: str) -> None:
    """Says which database an offline command works on (not silently ``.data``)."""
    from sqlalchemy.engine import make_url

    url = make_url(settings.database_url_for(service)).render_as_string(hide_password=True)
    print(f"plumbline: the {service} database: {url}", file=sys.stderr)


def _cmd_run(args: argparse.Namespace) -> int:
    from plumbline.common.db import configure_pools
    from plumbline.runner import run
    from plumbline.workers import Inherited

    settings = _settings(args)
    setup_logging(settings.log_level, json_lines=args.json_logs)
    targets = resolve(args.target)
    inherited = None
    if args.parent_fd is not None:
        inherited = Inherited(args.listen_fd, args.parent_fd)
    configure_pools(settings.db_pool_size, settings.db_max_overflow)
    asyncio.run(run(settings, targets, args.json_logs, inherited))
    return 0


def _cmd_list_targets(args: argparse.Namespace) -> int:
    print("all")
    for name, (_factory, deps) in MODULES.items():
        after = f" (after {', '.join(deps)} when in the same process)" if deps else ""
        print(f"{name}{after}")
    return 0


def _cmd_migrate(args: argparse.Namespace) -> int:
    from plumbline.common.migrations import upgrade

    settings = _settings(args)
    setup_logging(settings.log_level)
    services = [t for t in resolve(args.target) if t in SERVICES]

    async def migrate() -> None:
        for service in services:
            await upgrade(service, settings.database_url_for(service))
            print(f"migrated {service}")
            _tell_database(settings, service)

    asyncio.run(migrate())
    return 0


def _cmd_credentials_create(args: argparse.Namespace) -> int:
    from plumbline.services.identity.offline import create_credentials

    settings = _settings(args)
    setup_logging("WARNING")
    _tell_database(settings, "identity")
    client_id, secret = asyncio.run(create_credentials(settings, args.user, args.name))
    print(f"client_id: {client_id}")
    print(f"client_secret: {secret}")
    print("The secret is shown only this once; store it now.", file=sys.stderr)
    return 0


def _cmd_config_apply(args: argparse.Namespace) -> int:
    from plumbline.services.items.offline import apply_config

    settings = _settings(args)
    setup_logging("WARNING")
    _tell_database(settings, "items")
    changes = asyncio.run(apply_config(settings, args.file, args.dry_run))
    verb = "would change" if args.dry_run else "changed"
    for change in changes:
        print(would(change) if args.dry_run else change)
    print(f"{verb} {len(changes)} thing(s)" if changes else "nothing to change")
    return 0


def _cmd_import(args: argparse.Namespace) -> int:
    from plumbline.importer_cli import Options, run

    options = Options(
        file=args.file,
        project=args.project,
        url=args.url,
        user=args.user,
        password=args.password,
        token=args.token,
        ids=args.ids,
        quiet=args.quiet,
    )
    return run(options)


def _cmd_reqif_export(args: argparse.Namespace) -> int:
    from plumbline.reqif_cli import ExportOptions, export

    options = ExportOptions(
        project=args.project,
        output=args.output,
        format=args.format,
        item=args.item,
        filter=args.filter,
        baseline=args.baseline,
        url=args.url,
        user=args.user,
        password=args.password,
        token=args.token,
        quiet=args.quiet,
    )
    return export(options)


def _cmd_reqif_import(args: argparse.Namespace) -> int:
    from plumbline.reqif_cli import ImportOptions, import_file

    options = ImportOptions(
        file=args.file,
        project=args.project,
        mapping=args.mapping,
        dry_run=args.dry_run,
        delete_left=args.delete_left,
        url=args.url,
        user=args.user,
        password=args.password,
        token=args.token,
        quiet=args.quiet,
    )
    return import_file(options)


#: How a dry run tells what a change would do.
_WOULD = {
    "created ": "would create ",
    "updated ": "would update ",
    "restored ": "would restore ",
    "added ": "would add ",
}


def would(change: str) -> str:
    """A change line as a dry run tells it: what would happen, not what did."""
    for done, pending in _WOULD.items():
        if change.startswith(done):
            return pending + change[len(done) :]
    return f"would make: {change}"


def _version() -> str:
    try:
        return version("plumbline")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


_DATA_DIR = (
    "the embedded topology's data folder (PLUMBLINE_DATA_DIR, default .data): give the "
    "one the server runs with; PLUMBLINE_DATABASE_URL and PLUMBLINE_<SERVICE>_DATABASE_URL "
    "are read as by run"
)
_DESCRIPTION = """Plumbline, requirements and test management: runs its services, does
the operator's offline chores (migrations, API credentials, the configuration) and
bulk-imports items into a running server."""
_EPILOG = """Every setting is also an environment variable (PLUMBLINE_*, see the README).
"plumbline COMMAND --help" tells more about a command.
"""


def parser() -> argparse.ArgumentParser:
    """The argument parser (also used by the docs)."""
    top = argparse.ArgumentParser(
        prog="plumbline",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    top.add_argument("--version", action="version", version=f"plumbline {_version()}")
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser(
        "run", help="run one or more targets (services, the gateway, or all) in this process"
    )
    run.add_argument(
        "--target", default="all", help=f"all, or a comma list of: {', '.join(MODULES)}"
    )
    run.add_argument("--http-port", type=int, help="HTTP port (PLUMBLINE_HTTP_PORT, 8080)")
    run.add_argument("--grpc-port", type=int, help="gRPC port (PLUMBLINE_GRPC_PORT, 9090)")
    run.add_argument("--data-dir", type=Path, help=_DATA_DIR)
    run.add_argument("--ready-file", type=Path, help="write the bound ports here once ready")
    run.add_argument("--json-logs", action="store_true", help="log one JSON object a line")
    # A child's (a gateway worker, the analytics process), from the process that starts
    # it (plumbline.workers).
    run.add_argument("--listen-fd", type=int, help=argparse.SUPPRESS)
    run.add_argument("--parent-fd", type=int, help=argparse.SUPPRESS)
    run.set_defaults(func=_cmd_run)

    targets = commands.add_parser(
        "list-targets", help="list the targets and the order they start in"
    )
    targets.set_defaults(func=_cmd_list_targets)

    migrate = commands.add_parser(
        "migrate", help="apply every pending database migration (before a distributed start)"
    )
    migrate.add_argument("--target", default="all", help="services to migrate (default all)")
    migrate.add_argument("--data-dir", type=Path, help=_DATA_DIR)
    migrate.set_defaults(func=_cmd_migrate)

    credentials = commands.add_parser(
        "credentials", help="create API client credentials (OAuth client id and secret)"
    )
    cred_commands = credentials.add_subparsers(dest="credentials_command", required=True)
    create = cred_commands.add_parser("create", help="create client credentials for a user")
    create.add_argument("--user", required=True, help="user name")
    create.add_argument("--name", default="cli", help="name of the integration")
    create.add_argument("--data-dir", type=Path, help=_DATA_DIR)
    create.set_defaults(func=_cmd_credentials_create)

    config = commands.add_parser(
        "config", help="make the configuration (item types, pick lists, ...) match a file"
    )
    config_commands = config.add_subparsers(dest="config_command", required=True)
    apply = config_commands.add_parser("apply", help="make the configuration match a file")
    apply.add_argument("file", type=Path, help="YAML configuration document")
    apply.add_argument("--dry-run", action="store_true", help="show the changes, make none")
    apply.add_argument("--data-dir", type=Path, help=_DATA_DIR)
    apply.set_defaults(func=_cmd_config_apply)

    imports = commands.add_parser(
        "import",
        help="bulk-import items and relationships from a JSON Lines file (docs/import.md)",
        description="Streams a JSON Lines file to a running server's bulk import; one "
        "transaction: all of it is imported, or nothing. Exit 0 done, 1 refused or "
        "unreachable, 2 a usage problem.",
    )
    imports.add_argument(
        "file", type=Path, metavar="FILE", help="JSON Lines file: one item or relationship a line"
    )
    imports.add_argument(
        "--project", type=int, required=True, metavar="ID", help="id of the project to import into"
    )
    imports.add_argument("--url", help="the server (PLUMBLINE_URL, default http://127.0.0.1:8080)")
    imports.add_argument("--user", help="user name for HTTP Basic (PLUMBLINE_USER)")
    imports.add_argument("--password", help="password for HTTP Basic (PLUMBLINE_PASSWORD)")
    imports.add_argument(
        "--token", help="bearer token, instead of user and password (PLUMBLINE_TOKEN)"
    )
    imports.add_argument(
        "--ids",
        type=Path,
        metavar="FILE",
        help="after the import, write the new id of each item key here (JSON)",
    )
    imports.add_argument("--quiet", action="store_true", help="no progress bar or status line")
    imports.set_defaults(func=_cmd_import)
    _reqif_parser(commands)
    return top


def _connection_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("--url", help="the server (PLUMBLINE_URL, default http://127.0.0.1:8080)")
    command.add_argument("--user", help="user name for HTTP Basic (PLUMBLINE_USER)")
    command.add_argument("--password", help="password for HTTP Basic (PLUMBLINE_PASSWORD)")
    command.add_argument(
        "--token", help="bearer token, instead of user and password (PLUMBLINE_TOKEN)"
    )


def _reqif_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    reqif = commands.add_parser("reqif", help="ReqIF exchange (docs/contexts/reports.md)")
    reqif_commands = reqif.add_subparsers(dest="reqif_command", required=True)
    export = reqif_commands.add_parser(
        "export",
        help="export a project, an item's subtree, a filter's items or a baseline as ReqIF",
        description="Streams a running server's ReqIF export into a file. Exit 0 done, 1 "
        "refused or unreachable, 2 a usage problem.",
    )
    export.add_argument(
        "--project", type=int, required=True, metavar="ID", help="id of the project to export"
    )
    export.add_argument(
        "-o", "--output", type=Path, metavar="FILE", help="default: project-ID.reqif(z)"
    )
    export.add_argument(
        "--format",
        choices=("reqif", "reqifz"),
        default="reqif",
        help="reqif: the XML document (default); reqifz: the same, zipped",
    )
    export.add_argument(
        "--item", type=int, metavar="ID", help="only this item and what is under it"
    )
    export.add_argument("--filter", type=int, metavar="ID", help="only the items this filter finds")
    export.add_argument("--baseline", type=int, metavar="ID", help="the items of this baseline")
    _connection_arguments(export)
    export.add_argument("--quiet", action="store_true", help="no progress bar")
    export.set_defaults(func=_cmd_reqif_export)
    imported = reqif_commands.add_parser(
        "import",
        help="import a ReqIF document (.reqif or .reqifz) into a project",
        description="Sends a ReqIF document to a running server's ReqIF import; all of it "
        "is imported, or nothing. A newer revision of a document imported before updates "
        "its items: it tells what it added, changed, moved and left. Exit 0 done, 1 "
        "refused or unreachable, 2 a usage problem.",
    )
    imported.add_argument("file", type=Path, metavar="FILE", help="the .reqif or .reqifz file")
    imported.add_argument(
        "--project", type=int, required=True, metavar="ID", help="id of the project to import into"
    )
    imported.add_argument(
        "--mapping", type=Path, metavar="FILE", help="the mapping document (JSON)"
    )
    imported.add_argument(
        "--dry-run", action="store_true", help="tell what would be imported; write nothing"
    )
    imported.add_argument(
        "--delete-left",
        action="store_true",
        help="delete the items and relationships the document no longer holds",
    )
    _connection_arguments(imported)
    imported.add_argument("--quiet", action="store_true", help="no progress bar")
    imported.set_defaults(func=_cmd_reqif_import)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script."""
    args = parser().parse_args(argv)
    try:
        return int(args.func(args))
    except PlumblineError as exc:
        print(f"plumbline: {exc.message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
