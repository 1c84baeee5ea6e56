"""CSV cells a spreadsheet would run as a formula, made inert on export and read back unchanged.

A review item whose text begins `=HYPERLINK(`, `+cmd|`, `-2+3` or `@SUM(` was written verbatim into the
AMT batch CSV, and a spreadsheet opening the file (to check a batch, as requesters do) runs it. As
OWASP's CSV-injection advice says, such a cell gets a leading `'` (spreadsheets show the text and run
nothing); so that the import gives back exactly the exported text, a cell that already began with `'`
gets one too, and `from_spreadsheet` takes off one leading `'` before any of these.
"""

from __future__ import annotations

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
QUOTE = "'"


def spreadsheet_safe(cell: str) -> str:
    """`cell` with a `'` in front when a spreadsheet would read it as a formula (or it begins with `'`)."""
    return QUOTE + cell if cell.startswith((*FORMULA_STARTS, QUOTE)) else cell


def from_spreadsheet(cell: str) -> str:
    """The text `spreadsheet_safe` was given: one leading `'` before a formula start or a `'` removed."""
    if cell.startswith(QUOTE) and cell[1:].startswith((*FORMULA_STARTS, QUOTE)):
        return cell[1:]
    return cell
