"""Check config-group choices on the command line before Hydra composes, so an unknown option
(e.g. a training set that does not exist) fails with the list of valid choices.

User config folders: every folder of `hydra.searchpath` on the command line, and every folder of
the environment variable NLIFORGE_CONFIG_PATH (separated like PATH: `:` here, `;` on Windows),
hold options of the same groups as the repository's conf/ (`data/train_sets/<name>.yaml`,
`suite/<name>.yaml`, ...). The check accepts their options, and `run_cli` adds the environment's
folders to `hydra.searchpath` so Hydra composes from them.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from pathlib import Path

from nliforge.data.errors import NLIDataError

CONF_DIR = str(Path(__file__).resolve().parents[3] / "conf")  # the repository's conf/ (editable install)
_OVERRIDE = re.compile(r"^[+~]?(?P<group>[A-Za-z_][\w/]*)(@[\w.]+)?=(?P<value>.*)$")
_NAME = re.compile(r"[A-Za-z0-9_.\-]+")
_SEARCHPATH = re.compile(r"^[+~]*hydra\.searchpath=")
USER_CONFIG_ENV = "NLIFORGE_CONFIG_PATH"


def searchpath(args: Sequence[str]) -> list[str] | None:
    """The entries of a `hydra.searchpath=[...]` override (Hydra's own parser), or None without one."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    given = [a for a in args if _SEARCHPATH.match(a)]
    if not given:
        return None
    try:
        value = OverridesParser.create().parse_overrides([given[-1]])[0].value()
    except Exception as err:  # noqa: BLE001 - Hydra's parser raises its own error types
        raise NLIDataError(f"{given[-1]}: not a list of config folders ({err}); "
                           "expected hydra.searchpath=[file:///path/to/conf,...]") from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise NLIDataError(f"{given[-1]}: expected a list of folders, e.g. hydra.searchpath=[file:///path/to/conf]")
    return list(value)


def with_user_config_path(args: Sequence[str], env: str | None = None) -> list[str]:
    """`args` with the folders of NLIFORGE_CONFIG_PATH appended to `hydra.searchpath` (added once)."""
    env = os.environ.get(USER_CONFIG_ENV, "") if env is None else env
    folders = [f"file://{Path(f).resolve()}" for f in env.split(os.pathsep) if f.strip()]
    if not folders:
        return list(args)
    current = searchpath(args) or []
    merged = current + [f for f in folders if f not in current]
    rest = [a for a in args if not _SEARCHPATH.match(a)]
    return [*rest, "hydra.searchpath=[" + ",".join(f"'{f}'" for f in merged) + "]"]


def config_dirs(args: Sequence[str], conf_dir: str | Path) -> list[Path] | None:
    """conf_dir and the local folders of `hydra.searchpath`; None when an entry is a package
    (`pkg://`) whose options cannot be listed here, so the check must leave choices to Hydra."""
    dirs = [Path(conf_dir)]
    for entry in searchpath(args) or []:
        if entry.startswith("pkg://"):
            return None
        dirs.append(Path(entry.removeprefix("file://")))
    return dirs


def group_options(dirs: Sequence[Path], group: str) -> list[str] | None:
    """Options of a config group over every folder; None when no folder has it as a group."""
    folders = [d / group for d in dirs if (d / group).is_dir() and not (d / f"{group}.yaml").is_file()]
    if not folders:
        return None
    return sorted({p.stem for folder in folders for p in folder.glob("*.yaml")})


def check_group_choices(args: Sequence[str], conf_dir: str | Path) -> None:
    """Raise NLIDataError naming the group and its valid options (in conf_dir and in every folder of
    `hydra.searchpath`) for any unknown choice."""
    dirs = config_dirs(args, conf_dir)
    if dirs is None:
        return
    for arg in args:
        match = _OVERRIDE.match(arg)
        if not match or "(" in match["value"]:  # sweep functions such as glob(*) are Hydra's to expand
            continue
        group = match["group"]
        if group.startswith("hydra/"):  # Hydra's own groups also hold plugin presets (submitit_slurm, ...)
            continue
        valid = group_options(dirs, group)
        if valid is None:
            continue
        for name in _NAME.findall(match["value"]):
            if name != "null" and name not in valid:
                where = f" (from {', '.join(str(d) for d in dirs)})" if len(dirs) > 1 else ""
                raise NLIDataError(f"{group}: unknown option {name!r}; valid choices: {', '.join(valid)}{where}")


def run_cli(hydra_main: Callable[[], None], conf_dir: str | Path) -> None:
    """Add the user config folders to the search path, validate group choices, then hand over to
    the Hydra entry point."""
    try:
        sys.argv[1:] = with_user_config_path(sys.argv[1:])
        check_group_choices(sys.argv[1:], conf_dir)
    except NLIDataError as err:
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    hydra_main()


@contextmanager
def one_line_errors(*errors: type[BaseException]):
    """Report the listed user-facing errors as one `error: ...` line on stderr and exit 1 (no traceback wall)."""
    try:
        yield
    except errors as err:
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(1) from None
