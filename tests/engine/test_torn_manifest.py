"""Every reader of a generation run folder's manifest.json turns a torn (half-written), empty or foreign
file into one error naming the file (before: a 54-line JSONDecodeError from the resume)."""

from __future__ import annotations

import pytest

from nliforge.engine.run_folder import RunFolder
from nliforge.errors import NLIDataError
from nliforge.utils.atomic import read_json_file


@pytest.mark.parametrize("content,says", [('{"stages": {"parse": {"count_in": 4', "not valid JSON at line 1"),
                                          ("", "empty"), ("\x00\x01binary", "not valid JSON"),
                                          (b"\xff\xfe", "not a JSON file")])
def test_a_torn_or_foreign_manifest_is_named(tmp_path, content, says):
    path = tmp_path / "manifest.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(NLIDataError, match=f"^{path}: {says}"):
        RunFolder(tmp_path).manifest()
    with pytest.raises(NLIDataError, match=f"^{path}: {says}"):
        RunFolder(tmp_path).update_manifest(final={"stage": "parse"})   # a resume writes nothing over it
    assert path.read_bytes() == (content if isinstance(content, bytes) else content.encode())


def test_a_folder_in_its_place_is_named(tmp_path):
    (tmp_path / "manifest.json").mkdir()
    with pytest.raises(NLIDataError, match="is a folder"):
        read_json_file(tmp_path / "manifest.json")
