"""The errors every user mistake raises (the ground floor: nothing here imports the rest of nliforge); each
message names where the problem is."""


class NLIDataError(ValueError):
    """Bad data or a bad data config: the message names the file and line, or the config key."""


class DatasetNotCachedError(NLIDataError):
    """A Hub dataset was requested while offline and it is not in the local cache."""
