"""The error types moved to `nliforge.errors` (the ground floor); kept here so older imports work."""

from nliforge.errors import DatasetNotCachedError, NLIDataError

__all__ = ["DatasetNotCachedError", "NLIDataError"]
