"""The type specs of a config node's `_target_`: what they keep of a hint, and the disk cache that lets a wrong
setting be refused without importing torch and lightning."""

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Literal, Optional, Union

from nliforge.utils.schema import describe, matches
from nliforge.utils.target_hints import cache_key, spec_of

CSV_LOGGER = "lightning.pytorch.loggers.CSVLogger"


def test_spec_of_keeps_what_the_check_needs():
    assert spec_of(Optional[int]) == ["union", ["int", "none"]]
    assert spec_of(Union[int, str, list[int]]) == ["union", ["int", "str", "list"]]
    assert spec_of(int | None) == ["union", ["int", "none"]]
    assert spec_of(Literal["min", "max", 1]) == ["literal", ["str", "int"]]
    assert spec_of(dict[str, int]) == "dict"
    assert spec_of(tuple[float, float]) == "list"
    assert spec_of(Path) == ["other", "Path"]


def test_matches_and_describe_read_specs():
    opt_int = spec_of(Optional[int])
    assert matches(3, opt_int) is True and matches("abc", opt_int) is False
    assert matches(True, opt_int) is False   # a boolean is not an integer
    assert describe(opt_int) == "an integer or null"
    mode = spec_of(Literal["min", "max"])
    assert matches("min", mode) is True and matches(2, mode) is False and describe(mode) == "a string"
    assert matches("x", spec_of(Union[int, Path])) is None   # a Path may be anything: not decided here
    assert matches(2, spec_of(float)) is True and matches(2.5, spec_of(int)) is False


def test_the_key_names_the_distributions_version_and_nliforge_is_never_kept():
    key = cache_key(CSV_LOGGER)
    assert key == (f"{CSV_LOGGER}|{sys.version_info[0]}.{sys.version_info[1]}"
                   f"|lightning=={importlib.metadata.version('lightning')}")
    assert cache_key("nliforge.utils.schema.ValidateConfig") is None
    assert cache_key("no_such_package_xyz.Thing") is None


def _specs_in_a_fresh_process(cache: Path) -> dict:
    code = ("import json, sys; from nliforge.utils.target_hints import target_specs; "
            f"s = dict(target_specs({CSV_LOGGER!r})); print(json.dumps([s, 'lightning' in sys.modules]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NLIFORGE_CACHE": str(cache)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_target_is_imported_once_then_read_from_the_cache(tmp_path):
    (tmp_path / "target_hints.json").write_text("{ torn")   # an unreadable file: read afresh, then rewritten
    first, imported = _specs_in_a_fresh_process(tmp_path)
    assert imported   # read by importing it
    assert first["flush_logs_every_n_steps"] == "int" and first["name"] == ["union", ["str", "none"]]
    stored = json.loads((tmp_path / "target_hints.json").read_text())
    assert stored == {cache_key(CSV_LOGGER): first}
    again, imported = _specs_in_a_fresh_process(tmp_path)
    assert again == first and not imported   # from the file, lightning never imported
    # what the file says is what the check uses (a planted spec is returned as it is)
    stored[cache_key(CSV_LOGGER)] = {"prefix": "int"}
    (tmp_path / "target_hints.json").write_text(json.dumps(stored))
    assert _specs_in_a_fresh_process(tmp_path)[0] == {"prefix": "int"}
