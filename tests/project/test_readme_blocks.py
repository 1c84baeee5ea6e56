"""The README's generated blocks: read, replaced in place, and compared with a fresh rendering."""

from __future__ import annotations

import pytest

from nliforge.errors import NLIDataError
from nliforge.utils.readme_blocks import block_differences, check_blocks, read_blocks, replace_blocks

README = """# t
text 12 before
<!-- numbers:demo.table -->
| a | b |
|---|---|
| 69.3 | 1,202 |
<!-- /numbers:demo.table -->
between
<!-- numbers:measured.times -->
took 100 s
<!-- /numbers:measured.times -->
"""


def test_read_and_replace_touch_only_the_blocks():
    assert read_blocks(README) == {"demo.table": "| a | b |\n|---|---|\n| 69.3 | 1,202 |\n",
                                   "measured.times": "took 100 s\n"}
    new = replace_blocks(README, {"demo.table": "| a |\n|---|\n| 1.0 |"})
    assert read_blocks(new)["demo.table"] == "| a |\n|---|\n| 1.0 |\n"
    assert read_blocks(new)["measured.times"] == "took 100 s\n"
    assert new.replace("| a |\n|---|\n| 1.0 |\n", "") == README.replace("| a | b |\n|---|---|\n| 69.3 | 1,202 |\n", "")


def test_a_block_the_readme_lacks_or_repeats_is_an_error():
    with pytest.raises(NLIDataError, match=r"no block for \['other'\]"):
        replace_blocks(README, {"other": "x"})
    with pytest.raises(NLIDataError, match="appears twice"):
        read_blocks(README + "<!-- numbers:demo.table -->\nx\n<!-- /numbers:demo.table -->\n")


def test_numbers_compare_exactly_or_within_tolerance_and_words_must_match():
    assert block_differences("| 69.3 | 1,202 |", "| 69.3 | 1,202 |") == []
    assert block_differences("| 69.3 | 1,202 |", "| 68.8 | 1,202 |") == ["README 69.3 vs fresh 68.8"]
    assert block_differences("| 69.3 | 1,202 |", "| 68.8 | 1,202 |", tolerance=0.5) == []
    assert block_differences("| 69.3 | 1,202 |", "| 69.3 | 1,201 |", tolerance=0.5) == ["README 1,202 vs fresh 1,201"]
    assert block_differences("3 identical", "3 copies")[0].startswith("text differs")


def test_check_skips_measured_blocks_and_reports_missing_ones():
    fresh = {"demo.table": "| a | b |\n|---|---|\n| 69.3 | 1,202 |\n", "measured.times": "took 7 s\n"}
    assert check_blocks(README, fresh) == {}
    fresh["demo.table"] = "| a | b |\n|---|---|\n| 27.7 | 1,202 |\n"
    fresh["new.block"] = "1"
    assert check_blocks(README, fresh) == {"demo.table": ["README 69.3 vs fresh 27.7"],
                                           "new.block": ["the README has no such block"]}
