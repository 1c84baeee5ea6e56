"""The one data model: records, label maps, readers and writers, loaders, combinations."""

from nliforge.errors import DatasetNotCachedError, NLIDataError
from nliforge.data.jsonl import read_jsonl, records_digest, write_jsonl
from nliforge.data.labels import ID2LABEL, LABEL2ID, LABELS, map_label, model_label_permutation
from nliforge.data.records import Record, record_from_mapping
from nliforge.utils.atomic import atomic_write_text

__all__ = [
    "DatasetNotCachedError", "NLIDataError", "Record", "record_from_mapping", "read_jsonl",
    "write_jsonl", "atomic_write_text", "records_digest", "LABELS", "LABEL2ID", "ID2LABEL",
    "map_label", "model_label_permutation",
]
