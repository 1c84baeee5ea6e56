"""`nliforge-data`: the real data files registered with nliforge (the authors' releases).

    nliforge-data list                 every registered file, where it is expected, and its state
    nliforge-data fetch SET [SET ...]  download (or `all`) into NLIFORGE_DATA_DIR, else <cache>/real
    nliforge-data check [SET ...]      load each set as a run would: sha256, row and label counts

Offline, point NLIFORGE_DATA_DIR at a folder laid out like the download (e.g. a shared copy).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter

from nliforge.errors import NLIDataError
from nliforge.utils.system_errors import system_errors


def _cache_dir() -> str:
    return os.environ.get("NLIFORGE_CACHE") or os.path.join(os.environ.get("NLIFORGE_ROOT", "."), "data_cache")


def list_files(args) -> int:
    from nliforge.data.fetch import registered_files, status

    for f in registered_files(_cache_dir()):
        print(f"{f.name:34s} {f.kind:10s} {status(f):15s} {f.path}")
    return 0


def fetch_files(args) -> int:
    from nliforge.data.fetch import fetch, registered_files, select

    fetch(select(args.sets, registered_files(_cache_dir())))
    return 0


def check_sets(args) -> int:
    from nliforge.data.fetch import registered_files, select
    from nliforge.data.registry import load_set

    files = registered_files(_cache_dir())
    for f in select(args.sets or ["all"], files):
        spec = {**f.spec, "path": str(f.path)}
        records = load_set(spec, f"data.{f.kind}.{f.name}", None, _cache_dir())
        counts = Counter(r.label for r in records)
        print(f"{f.name}: {len(records)} pairs ({', '.join(f'{k} {v}' for k, v in sorted(counts.items()))}); "
              f"sha256 and counts ok")
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="nliforge-data", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="registered files and their state").set_defaults(run=list_files)
    f = sub.add_parser("fetch", help="download registered files (sha256 checked)")
    f.add_argument("sets", nargs="+", help="set names, or all")
    f.set_defaults(run=fetch_files)
    c = sub.add_parser("check", help="load sets and check their sha256 and counts")
    c.add_argument("sets", nargs="*", help="set names (default: all)")
    c.set_defaults(run=check_sets)
    return p


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    try:
        with system_errors():
            code = args.run(args)
        raise SystemExit(code)
    except NLIDataError as err:
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(2) from None
