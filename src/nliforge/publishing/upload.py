"""Upload a finished Hub-layout folder with huggingface_hub: create the dataset repo (kept when it
exists) and commit the folder's files. huggingface_hub reads the token (HF_TOKEN or `hf auth login`)
and the endpoint (HF_ENDPOINT, or `hub.endpoint`)."""

from __future__ import annotations

import re
from pathlib import Path

from nliforge.errors import NLIDataError

_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")


def check_repo_id(repo_id: str) -> str:
    """A dataset repo id is `<user or org>/<name>`; huggingface_hub's validator checks the rest."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(repo_id)
    except HFValidationError as err:
        raise NLIDataError(f"repo_id={repo_id!r}: {err}") from None
    if not _REPO_ID.match(repo_id):
        raise NLIDataError(f"repo_id={repo_id!r}: expected <user or organization>/<dataset name>")
    return repo_id


def upload_folder(folder: Path, repo_id: str, private: bool, endpoint: str | None, message: str) -> dict:
    """Create the repo if needed and commit every file of `folder`; returns the repo and commit URLs."""
    from huggingface_hub import HfApi, constants, get_token

    if constants.HF_HUB_OFFLINE:
        raise NLIDataError("HF_HUB_OFFLINE is set: uploading needs the Hub; unset it, or keep dry_run=true")
    api = HfApi(endpoint=endpoint or None)
    if not (api.token or get_token()):
        raise NLIDataError("dry_run=false needs a Hugging Face token with write access: set HF_TOKEN "
                           "or run `hf auth login`")
    url = api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    info = api.upload_folder(folder_path=str(folder), repo_id=repo_id, repo_type="dataset", commit_message=message)
    return {"repo_url": str(url), "commit_url": info.commit_url, "commit_oid": info.oid}
