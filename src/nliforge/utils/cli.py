"""Check config-group choices on the command line before Hydra composes, so an unknown option
(e.g. a training set that does not exist) fails with the list of valid choices.

User config folders: every folder of `hydra.searchpath` on the command line, and every folder of
the environment variable NLIFORGE_CONFIG_PATH (separated like PATH: `:` here, `;` on Windows),
hold options of the same groups as the repository's conf/ (`data/train_sets/<name>.yaml`,
`suite/<name>.yaml`, ...). The check accepts their options, and `run_cli` adds the environment's
folders to `hydra.searchpath` so Hydra composes from them.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import sys
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from pathlib import Path

from omegaconf import OmegaConf

from nliforge.errors import NLIDataError
from nliforge.utils.system_errors import system_errors

CONF_DIR = str(Path(__file__).resolve().parents[1] / "conf")  # the configs shipped in the package (nliforge/conf)
_OVERRIDE = re.compile(r"^[+~]?(?P<group>[A-Za-z_][\w/]*)(@[\w.]+)?=(?P<value>.*)$")
_NAME = re.compile(r"[A-Za-z0-9_.\-]+")
_SEARCHPATH = re.compile(r"^[+~]*hydra\.searchpath=")
USER_CONFIG_ENV = "NLIFORGE_CONFIG_PATH"
TRACEBACKS = "NLIFORGE_FULL_ERROR"   # set by run_cli: "1" when the user asked Hydra for full tracebacks


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


def _flag_values() -> dict[str, str | None]:
    """Hydra's command-line flags and how many values each takes: {'--cfg': None (one), '-m': 0, '--info': '?'}."""
    from hydra._internal.utils import get_args_parser

    return {flag: action.nargs for action in get_args_parser()._actions for flag in action.option_strings}


def override_end(args: Sequence[str]) -> int:
    """The index just after the last override (a positional argument) in `args`, skipping Hydra's flags
    and their values (`--cfg job`, `-cn name`, `--info config`); 0 when there is no override.

    Hydra's argparse reads the overrides as one run of positionals, so an override placed after a flag
    that ends that run (`a=1 --cfg job b=2`) is refused as an unrecognized argument."""
    flags, end, i = _flag_values(), 0, 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("-") and arg != "-":
            nargs = flags.get(arg.split("=", 1)[0])
            takes_next = "=" not in arg and arg in flags and nargs != 0
            if takes_next and i + 1 < len(args) and (nargs is None or not args[i + 1].startswith("-")):
                i += 1                     # the flag's value (`--cfg job`; `--info config`)
        else:
            end = i + 1
        i += 1
    return end


def with_user_config_path(args: Sequence[str], env: str | None = None, extra: Sequence[Path] = ()) -> list[str]:
    """`args` with the folders of NLIFORGE_CONFIG_PATH, then `extra` (the user data home's conf/), added to
    `hydra.searchpath` (each once); the override goes right after the last override, before Hydra's flags
    such as `--cfg job` or `-m`."""
    env = os.environ.get(USER_CONFIG_ENV, "") if env is None else env
    folders = [f"file://{Path(f).resolve()}" for f in [*env.split(os.pathsep), *map(str, extra)] if f.strip()]
    if not folders:
        return list(args)
    current = searchpath(args) or []
    merged = current + [f for f in folders if f not in current]
    rest = [a for a in args if not _SEARCHPATH.match(a)]
    at = override_end(rest)
    return [*rest[:at], "hydra.searchpath=[" + ",".join(f"'{f}'" for f in merged) + "]", *rest[at:]]


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
                raise NLIDataError(f"{group}: unknown option {name!r};{did_you_mean(name, valid)} valid choices: "
                                   f"{', '.join(valid)}{where}")


def did_you_mean(name: str, choices: Sequence[str]) -> str:
    """` did you mean 'x'?` when one choice is close to `name` (difflib's ratio >= 0.75), else ''."""
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.75)
    return f" did you mean {close[0]!r}?" if close else ""


def hydra_error_line(err: BaseException) -> str:
    """One line for a Hydra composition or override error; an unknown key names the closest key there."""
    cause = err.__cause__
    key, parent = getattr(cause, "full_key", None), getattr(cause, "parent_node", None)
    if key and parent is not None and "not in struct" in str(cause):
        prefix, _, leaf = str(key).rpartition(".")
        close = difflib.get_close_matches(leaf, [str(k) for k in parent.keys()], n=1, cutoff=0.75)
        hint = f" did you mean {(prefix + '.' if prefix else '') + close[0]!r}?" if close else ""
        return f"{key}: no such setting;{hint} (+{key}=... adds a new key)"
    lines = [line.strip() for line in str(err).splitlines() if line.strip() and not line.startswith("See https")]
    return "; ".join(lines)


def failed_job_line(err: BaseException) -> str:
    """One line for a multirun whose cluster job failed: submitit's first line (job id, log folder, state)
    and the job's own `error:` line when its error stream has one (a refused value)."""
    text = str(err).strip()
    first = text.splitlines()[0].rstrip(":") if text else type(err).__name__
    own = [line.strip() for line in text.splitlines() if line.strip().startswith("error: ")]
    return f"a job of the multirun failed: {first}" + (f"; the job said: {own[-1][len('error: '):]}" if own else "")


def app_groups(config_name: str, choices: Sequence[str], conf_dir: str | Path = CONF_DIR) -> list[str]:
    """The config groups an entry point uses: those of its primary config's defaults list (a list
    selection such as data/train_sets included) and every group chosen while composing (hydra/ excluded)."""
    import yaml

    path = Path(conf_dir) / f"{config_name}.yaml"
    defaults = (yaml.safe_load(path.read_text()) or {}).get("defaults", []) if path.is_file() else []
    named = [next(iter(d)) for d in defaults if isinstance(d, dict)] + list(choices)
    groups = {re.sub(r"^(optional |override )+", "", str(n)).split("@")[0].strip() for n in named}
    return sorted(g for g in groups if g and g != "hydra" and not g.startswith("hydra/"))


def help_groups() -> str:
    """`group: option, ...` for each group this entry point uses, from conf/ and every folder of
    `hydra.searchpath`: the help templates' `${nliforge_groups:}` (Hydra's $APP_CONFIG_GROUPS lists every
    group of conf/, e.g. generation-only ones under nliforge-train)."""
    from hydra.core.hydra_config import HydraConfig

    try:
        hc = HydraConfig.get()
    except ValueError:                       # composed outside @hydra.main: nothing to list
        return ""
    dirs = [Path(CONF_DIR)] + [Path(str(e).removeprefix("file://")) for e in hc.searchpath
                               if not str(e).startswith("pkg://")]
    lines = []
    for group in app_groups(hc.job.config_name, list(hc.runtime.choices.keys())):
        options = group_options(dirs, group)
        if options:
            lines.append(f"{group}: {', '.join(options)}")
    return "\n".join(lines)


def help_renders_only_what_its_template_shows() -> None:
    """Hydra's help renders $APP_CONFIG_GROUPS, $HYDRA_CONFIG_GROUPS and $CONFIG whether its template shows them
    or not; the group lists alone cost about two thirds of `--help`'s CPU time (Hydra composes every group's
    repository anew). nliforge's templates list their groups themselves (`${nliforge_groups:}`), so what a
    template does not name is left empty here."""
    from hydra._internal.hydra import Hydra

    original = Hydra.get_help
    if getattr(original, "only_what_it_shows", False):
        return

    def get_help(self, help_cfg, cfg, args_parser, resolve):
        template = str(OmegaConf.to_container(help_cfg, resolve=False).get("template", ""))
        if "_CONFIG_GROUPS" not in template:
            self.format_config_groups = lambda *args, **kwargs: ""
        if "$CONFIG" not in template.replace("_CONFIG_GROUPS", ""):
            cfg = OmegaConf.create()
        return original(self, help_cfg, cfg, args_parser, resolve)

    get_help.only_what_it_shows = True
    Hydra.get_help = get_help


def run_cli(hydra_main: Callable[[], None], conf_dir: str | Path, quiet: bool = False,
            extra_conf: Callable[[], Sequence[Path]] | None = None) -> None:
    """Add the user config folders (and `extra_conf()`'s, e.g. the config folders of pipelines from other
    packages) to the search path, validate group choices, then hand over to the Hydra entry point.
    `quiet`: one line per Lightning message, no tips (nliforge.utils.quiet).

    Hydra's own errors (an unknown key, a bad override) become one `error:` line, exit 2: Hydra is told to
    raise them (HYDRA_FULL_ERROR) unless the user set that variable to see the full trace."""
    from hydra.errors import HydraException

    try:
        from nliforge.utils.home import user_conf_dir

        extra = [user_conf_dir(create=True), *(extra_conf() if extra_conf else ())]
        sys.argv[1:] = with_user_config_path(sys.argv[1:], extra=extra)
        check_group_choices(sys.argv[1:], conf_dir)
    except NLIDataError as err:
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    if {"--help", "-h", "--hydra-help"} & set(sys.argv[1:]):
        help_renders_only_what_its_template_shows()
    if quiet:
        from nliforge.utils.quiet import quiet_libraries

        quiet_libraries()
    user_full_error = os.environ.get("HYDRA_FULL_ERROR") == "1"
    os.environ["HYDRA_FULL_ERROR"] = "1"
    os.environ[TRACEBACKS] = "1" if user_full_error else "0"   # for the jobs' one_line_errors
    try:
        with system_errors(enabled=not user_full_error, cleanup=remove_unused_run_dir):
            hydra_main()
    except HydraException as err:
        if user_full_error:
            raise
        print(f"error: {hydra_error_line(err)}", file=sys.stderr)
        raise SystemExit(2) from None
    except Exception as err:   # a cluster job of a multirun failed (submitit's UncompletedJobError)
        if user_full_error or type(err).__name__ != "UncompletedJobError":
            raise
        print(f"error: {failed_job_line(err)}", file=sys.stderr)
        raise SystemExit(1) from None
    finally:
        if not user_full_error:
            os.environ.pop("HYDRA_FULL_ERROR", None)


@contextmanager
def one_line_errors(*errors: type[BaseException]):
    """Report the listed user-facing errors as one `error: ...` line on stderr and exit 1 (no traceback
    wall), removing the run folder when Hydra's own files are all it holds (see remove_unused_run_dir)."""
    try:
        with system_errors(os.environ.get(TRACEBACKS) != "1", remove_unused_run_dir):   # a full disk, a missing setting
            yield
    except errors as err:
        remove_unused_run_dir()
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(1) from None


def remove_unused_run_dir() -> Path | None:
    """Delete this Hydra job's output folder if it holds nothing but Hydra's `.hydra/` and the job's log
    (a run refused before it wrote anything); a folder with any other file (a resumed run), or one that
    existed before this run started (nliforge.utils.run_start), is kept.
    Returns the removed folder, or None."""
    from hydra.core.hydra_config import HydraConfig

    try:
        hc = HydraConfig.get()
    except ValueError:                       # not under @hydra.main (tests, library use)
        return None
    try:
        out = Path(hc.runtime.output_dir)
    except Exception:   # noqa: BLE001 - Hydra stopped before it set the folder (a missing `${run}`): none made
        return None
    if out.resolve() == Path.cwd().resolve():   # hydra.run.dir=. (nliforge-report): the user's folder, not Hydra's
        return None
    from nliforge.utils.run_start import existed_before

    if existed_before(out) or not out.is_dir() or not {p.name for p in out.iterdir()} <= {".hydra", f"{hc.job.name}.log"}:
        return None
    shutil.rmtree(out, ignore_errors=True)
    return out


OmegaConf.register_new_resolver("nliforge_groups", help_groups, replace=True)   # conf/hydra/help/*.yaml
