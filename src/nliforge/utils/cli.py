"""Check config-group choices on the command line before Hydra composes, so an unknown option
(e.g. a training set that does not exist) fails with the list of valid choices."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from pathlib import Path

from nliforge.data.errors import NLIDataError

CONF_DIR = str(Path(__file__).resolve().parents[3] / "conf")  # the repository's conf/ (editable install)
_OVERRIDE = re.compile(r"^[+~]?(?P<group>[A-Za-z_][\w/]*)(@[\w.]+)?=(?P<value>.*)$")
_NAME = re.compile(r"[A-Za-z0-9_.\-]+")


def check_group_choices(args: Sequence[str], conf_dir: str | Path) -> None:
    """Raise NLIDataError naming the group and its valid options for any unknown choice."""
    conf_dir = Path(conf_dir)
    for arg in args:
        match = _OVERRIDE.match(arg)
        if not match or "(" in match["value"]:  # sweep functions such as glob(*) are Hydra's to expand
            continue
        group = match["group"]
        if group.startswith("hydra/"):  # Hydra's own groups also hold plugin presets (submitit_slurm, ...)
            continue
        folder = conf_dir / group
        if not folder.is_dir() or (conf_dir / f"{group}.yaml").is_file():
            continue
        valid = sorted(p.stem for p in folder.glob("*.yaml"))
        for name in _NAME.findall(match["value"]):
            if name != "null" and name not in valid:
                raise NLIDataError(f"{group}: unknown option {name!r}; valid choices: {', '.join(valid)}")


def run_cli(hydra_main: Callable[[], None], conf_dir: str | Path) -> None:
    """Validate group choices, then hand over to the Hydra entry point."""
    try:
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
