"""nliforge-study: pre-register a study, run it, see where it stands, judge it, or open a new attempt.

    nliforge-study preregister <study> [root=DIR]
    nliforge-study run <study> [root=DIR] [hydra/launcher=slurm hydra.launcher.partition=P ...]
    nliforge-study status <study> [root=DIR]
    nliforge-study verdict <study> [root=DIR] [wandb=true]
    nliforge-study amend <study> reason="why" [root=DIR]

<study> is a name (study/<name>.yaml on the config path: NLIFORGE_CONFIG_PATH, the user data home's conf/,
the package's conf/) or a path to a YAML file. The studies root is root=, else $NLIFORGE_STUDIES, else ./studies.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from nliforge.errors import NLIDataError

COMMANDS = {
    "preregister": "lock the study's plan (sha256, UTC time, git commit) as its first attempt",
    "run": "train the attempt's worlds × arms × seeds (finished runs skipped; hydra/launcher=slurm works)",
    "status": "what is done and what is left, and the gates so far",
    "verdict": "gates, t intervals over worlds, one-sided p, Holm per family, verdict words; claims.csv/.md/.png",
    "amend": "open a new attempt with the study file's current plan (reason=\"...\"); earlier ones are kept",
}
OPTIONS = {"preregister": {"root"}, "run": {"root", "attempt", "jobs"}, "status": {"root", "attempt"},
           "verdict": {"root", "wandb", "attempt"},
           "amend": {"root", "reason"}}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="nliforge-study", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n".join(__doc__.split("\n\n")[1:]))
    sub = p.add_subparsers(dest="command", required=True, metavar="{" + ",".join(COMMANDS) + "}")
    for name, text in COMMANDS.items():
        s = sub.add_parser(name, help=text, description=text)
        s.add_argument("study", help="a study name (conf/study/<name>.yaml) or a path to its YAML")
        s.add_argument("args", nargs="*", help="key=value: " + ", ".join(sorted(OPTIONS[name]))
                       + (", and nliforge-train overrides of where runs execute" if name == "run" else ""))
    return p


def split_args(command: str, args: Sequence[str]) -> tuple[dict, list[str]]:
    """Options of the command (root=, reason=, wandb=) and, for run, the overrides passed to every job."""
    options, rest = {}, []
    for arg in args:
        key, eq, value = arg.partition("=")
        if eq and key in OPTIONS[command]:
            options[key] = value
        elif command == "run" and eq:
            rest.append(arg)
        else:
            valid = ", ".join(f"{o}=..." for o in sorted(OPTIONS[command]))
            raise NLIDataError(f"{command}: {arg!r}: expected one of {valid}")
    return options, rest


def main(argv: Sequence[str] | None = None) -> None:
    args = parser().parse_args(argv)
    try:
        code = dispatch(args.command, args.study, list(args.args))
    except NLIDataError as err:
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    raise SystemExit(code)


def dispatch(command: str, name: str, args: list[str]) -> int:
    from nliforge.study import commands
    from nliforge.study.schema import load_study

    options, rest = split_args(command, args)
    study = load_study(name)
    root = options.get("root")
    number = attempt_number(options.get("attempt"))
    if command == "preregister":
        return commands.preregister(study, root)
    if command == "amend":
        return commands.amend(study, options.get("reason", ""), root)
    if command == "run":
        return commands.run(study, root, rest, number, parse_jobs(options.get("jobs", "1")))
    if command == "status":
        return commands.status(study, root, number)
    wandb = options.get("wandb", "false").lower()
    if wandb not in ("true", "false"):
        raise NLIDataError(f"verdict: wandb={wandb!r}; expected true or false")
    return commands.verdict(study, root, wandb == "true", number)


def parse_jobs(value: str) -> int:
    """`jobs=N`: how many groups (an arm and seed over the worlds) train at once with the local launcher."""
    if not value.isdigit() or int(value) < 1:
        raise NLIDataError(f"jobs={value!r}: expected a number of groups to train at once (1, 2, ...)")
    return int(value)


def attempt_number(value: str | None) -> int | None:
    """`attempt=N`: an earlier attempt (the study file must then hold that attempt's plan); default the latest."""
    if value is None:
        return None
    if not value.isdigit() or int(value) < 1:
        raise NLIDataError(f"attempt={value!r}: expected an attempt number (1, 2, ...)")
    return int(value)


if __name__ == "__main__":
    main()
