"""Write requirements.lock from the installed environment, or check the environment against it.

    python scripts/lock.py --write     # `make lock`: every package of the environment, pinned
    python scripts/lock.py --check     # exit 1 where the installed environment differs from the lock

The environment is what `make install` makes: nliforge with the extras it installs, every package
they need (transitively), and the packages it installs without dependencies
(nliforge.utils.environment.project_packages). A version's local label (`2.13.0+cpu`) is left out, so
the pin `torch==2.13.0` also holds for the build of torch a user installed first (a CUDA one)."""

from __future__ import annotations

import argparse
import platform
import sys
from pathlib import Path

from packaging.version import Version

from nliforge.utils.environment import EXTRAS, LOCK_NAME, NO_DEPS, ROOT, project_packages

HEADER = f"""\
# Every package of the environment `make install` makes, pinned: nliforge[{",".join(EXTRAS)}] and
# everything it needs, transitively, plus {", ".join(NO_DEPS)} (installed without its dependencies).
# Written by `make lock` (scripts/lock.py) from an environment on Python {{python}}, Linux x86-64;
# `make install` installs with `-c {LOCK_NAME}` (pyproject.toml keeps its ranges for `pip install`).
"""


def pins() -> dict[str, str]:
    """{package: version} of the installed environment, nliforge itself left out, local labels dropped."""
    return {name: Version(v).public for name, v in project_packages().items() if name != "nliforge"}


def read_lock(path: Path) -> dict[str, str]:
    """{package: version} of a lock file; an `error:` naming the file and line for a line that is no pin."""
    out = {}
    for n, line in enumerate(path.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, version = line.partition("==")
        if not sep or not name.strip() or not version.strip():
            sys.exit(f"error: {path}:{n}: expected `name==version`, got {line!r}")
        out[name.strip()] = version.strip()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="write the lock from the installed environment")
    mode.add_argument("--check", action="store_true", help="exit 1 where the environment differs from the lock")
    ap.add_argument("--lock", type=Path, default=ROOT / LOCK_NAME)
    args = ap.parse_args(argv)
    found = pins()
    if args.write:
        body = "".join(f"{name}=={version}\n" for name, version in sorted(found.items()))
        args.lock.write_text(HEADER.format(python=platform.python_version()) + body)
        print(f"wrote {len(found)} pins to {args.lock}")
        return 0
    if not args.lock.is_file():
        sys.exit(f"error: {args.lock}: no such lock file; write it with `make lock`")
    locked = read_lock(args.lock)
    differ = [f"{name}: installed {found.get(name, 'missing')}, locked {locked.get(name, 'not locked')}"
              for name in sorted(set(found) | set(locked)) if found.get(name) != locked.get(name)]
    print("\n".join(differ) if differ else f"the environment matches {args.lock} ({len(locked)} pins)")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
