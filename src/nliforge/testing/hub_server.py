"""A local stand-in for the Hugging Face Hub's upload API (127.0.0.1 only), so huggingface_hub's own
client code (`HfApi(endpoint=...)`: create_repo, upload_folder / create_commit) runs against it in tests.

Endpoints, as the Hub answers them (request and response shapes read from huggingface_hub's client):
  POST /api/repos/create                                 {name, organization, type, visibility} -> {url}; 409 (with
                                                         the url) if it exists
  POST /api/validate-yaml                                the README's YAML header: 400 {errors} if it does not parse
  POST /api/{type}s/{ns}/{name}/preupload/{rev}          per file: uploadMode lfs (a .gitattributes LFS pattern, a
                                                         binary sample or over 10 MB) or regular, and its current oid
  POST /{prefix}{ns}/{name}.git/info/lfs/objects/batch   LFS batch API (basic transfer): an upload and a verify action
                                                         per object not stored yet
  PUT  /lfs-storage/{oid}                                the object's bytes; 400 unless their sha256 and size match
  POST /{prefix}{ns}/{name}.git/info/lfs/objects/verify  200 once the object is stored
  POST /api/{type}s/{ns}/{name}/commit/{rev}             NDJSON header / file (base64) / lfsFile / deletedFile lines
  GET  /api/{type}s/{ns}/{name}/revision/{rev}           {id, sha}
Every request needs `Authorization: Bearer <token>` (401 otherwise); unknown repos answer 404 with
`X-Error-Code: RepoNotFound`, as the Hub does. The Xet transfer is not offered: huggingface_hub uses it
whenever `hf_xet` is installed, so a client that should talk to this server sets HF_HUB_DISABLE_XET=1.

Committed files are kept in memory: `server.repos[(type, "ns/name")].files[path] -> bytes`.
"""

from __future__ import annotations

import base64
import fnmatch
import hashlib
import json
from dataclasses import dataclass, field

import yaml
from aiohttp import web

from nliforge.generation.stand_in.threaded import ThreadedServer

# The patterns of the .gitattributes a new Hub repo starts with (a subset), stored as LFS.
LFS_PATTERNS = ("*.parquet", "*.arrow", "*.bin", "*.pt", "*.safetensors", "*.zip", "*.gz", "*.npy", "*.pkl")
LFS_SIZE = 10 * 1024 * 1024


@dataclass
class Repo:
    kind: str
    repo_id: str
    private: bool
    files: dict[str, bytes] = field(default_factory=dict)
    commits: list[dict] = field(default_factory=list)

    @property
    def head(self) -> str:
        return self.commits[-1]["oid"] if self.commits else "0" * 40


def _git_oid(data: bytes) -> str:
    """A regular file's oid, as git hashes a blob."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _error(status: int, message: str, code: str | None = None) -> web.Response:
    headers = {"X-Error-Code": code, "X-Error-Message": message} if code else {"X-Error-Message": message}
    return web.json_response({"error": message}, status=status, headers=headers)


class LocalHubServer(ThreadedServer):
    """The server on a background thread with its own event loop; `port=0` picks a free port."""

    thread_name = "local-hub-server"

    def __init__(self, token: str = "hf_test_token", port: int = 0):
        self.token, self.port = token, port
        self.repos: dict[tuple[str, str], Repo] = {}
        self.lfs: dict[str, bytes] = {}
        self.requests: list[tuple[str, str]] = []         # (method, path) of every request, in order
        super().__init__()
        self._runner: web.AppRunner | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- routing -----------------------------------------------------------------------------------
    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._auth], client_max_size=1024 ** 3)
        r = app.router
        r.add_post("/api/repos/create", self.create_repo)
        r.add_post("/api/validate-yaml", self.validate_yaml)
        r.add_post(r"/api/{kind:models|datasets|spaces}/{ns}/{name}/preupload/{rev}", self.preupload)
        r.add_post(r"/api/{kind:models|datasets|spaces}/{ns}/{name}/commit/{rev}", self.commit)
        r.add_get(r"/api/{kind:models|datasets|spaces}/{ns}/{name}/revision/{rev}", self.revision)
        for prefix, kind in (("/datasets", "dataset"), ("/spaces", "space"), ("", "model")):
            r.add_post(prefix + "/{ns}/{name}.git/info/lfs/objects/batch", self._with_kind(self.lfs_batch, kind))
            r.add_post(prefix + "/{ns}/{name}.git/info/lfs/objects/verify", self.lfs_verify)
        r.add_put("/lfs-storage/{oid}", self.lfs_put)
        return app

    @staticmethod
    def _with_kind(handler, kind: str):
        async def handle(request: web.Request) -> web.Response:
            return await handler(request, kind)
        return handle

    @web.middleware
    async def _auth(self, request: web.Request, handler):
        self.requests.append((request.method, request.path))
        if request.path.startswith("/lfs-storage/"):           # a presigned storage URL: no token, as on S3
            return await handler(request)
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return _error(401, "Invalid credentials in Authorization header")
        return await handler(request)

    def _repo(self, request: web.Request, kind: str | None = None) -> Repo | None:
        kind = kind or request.match_info["kind"].rstrip("s")
        return self.repos.get((kind, f"{request.match_info['ns']}/{request.match_info['name']}"))

    # -- handlers ----------------------------------------------------------------------------------
    async def create_repo(self, request: web.Request) -> web.Response:
        body = await request.json()
        kind, repo_id = body.get("type") or "model", f"{body.get('organization')}/{body.get('name')}"
        prefix = "" if kind == "model" else f"{kind}s/"
        url = f"{self.endpoint}/{prefix}{repo_id}"
        if (kind, repo_id) in self.repos:        # the Hub's 409 also names the repo's url (create_repo reads it)
            return web.json_response({"error": f"You already created this {kind} repo", "url": url}, status=409,
                                     headers={"X-Error-Message": f"You already created this {kind} repo"})
        self.repos[(kind, repo_id)] = Repo(kind, repo_id, body.get("visibility") == "private")
        return web.json_response({"url": url, "name": repo_id})

    async def validate_yaml(self, request: web.Request) -> web.Response:
        content = (await request.json()).get("content", "")
        try:
            header = content.split("---\n", 2)[1] if content.startswith("---\n") else ""
            if not isinstance(yaml.safe_load(header) or {}, dict):
                raise yaml.YAMLError("the header is not a mapping")
        except (yaml.YAMLError, IndexError) as err:
            return web.json_response({"errors": [{"message": f"Invalid YAML: {err}"}]}, status=400)
        return web.json_response({"errors": [], "warnings": []})

    async def preupload(self, request: web.Request) -> web.Response:
        repo = self._repo(request)
        if repo is None:
            return _error(404, "Repository not found", "RepoNotFound")
        files = []
        for f in (await request.json())["files"]:
            sample = base64.b64decode(f["sample"])
            lfs = any(fnmatch.fnmatch(f["path"], p) for p in LFS_PATTERNS) or b"\0" in sample or f["size"] > LFS_SIZE
            old = repo.files.get(f["path"])
            oid = None if old is None else (hashlib.sha256(old).hexdigest() if lfs else _git_oid(old))
            files.append({"path": f["path"], "uploadMode": "lfs" if lfs else "regular", "shouldIgnore": False,
                          "oid": oid})
        return web.json_response({"files": files, "commitOid": repo.head})

    async def lfs_batch(self, request: web.Request, kind: str) -> web.Response:
        if self._repo(request, kind) is None:
            return _error(404, "Repository not found", "RepoNotFound")
        body, base = await request.json(), f"{self.endpoint}{request.path.rsplit('/', 1)[0]}"
        objects = []
        for obj in body["objects"]:
            entry = {"oid": obj["oid"], "size": obj["size"], "authenticated": True}
            if obj["oid"] not in self.lfs:
                entry["actions"] = {"upload": {"href": f"{self.endpoint}/lfs-storage/{obj['oid']}?size={obj['size']}"},
                                    "verify": {"href": f"{base}/verify", "header": {}}}
            objects.append(entry)
        return web.json_response({"transfer": "basic", "objects": objects, "hash_algo": "sha256"},
                                 content_type="application/vnd.git-lfs+json")

    async def lfs_put(self, request: web.Request) -> web.Response:
        oid, data = request.match_info["oid"], await request.read()
        if hashlib.sha256(data).hexdigest() != oid or str(len(data)) != request.query.get("size"):
            return web.Response(status=400, text="sha256 or size does not match the object id")
        self.lfs[oid] = data
        return web.Response(status=200)

    async def lfs_verify(self, request: web.Request) -> web.Response:
        body = await request.json()
        if len(self.lfs.get(body["oid"], b"")) != body["size"] or body["oid"] not in self.lfs:
            return _error(404, f"object {body['oid']} not stored")
        return web.json_response({})

    async def commit(self, request: web.Request) -> web.Response:
        repo = self._repo(request)
        if repo is None:
            return _error(404, "Repository not found", "RepoNotFound")
        lines = [json.loads(x) for x in (await request.read()).decode().split("\n") if x.strip()]
        files, header = dict(repo.files), {}
        for line in lines:
            key, value = line["key"], line["value"]
            if key == "header":
                header = value
            elif key == "file":
                files[value["path"]] = base64.b64decode(value["content"])
            elif key == "lfsFile":
                if value["oid"] not in self.lfs:
                    return _error(422, f"LFS object {value['oid']} of {value['path']} was never uploaded")
                files[value["path"]] = self.lfs[value["oid"]]
            elif key in ("deletedFile", "deletedFolder"):
                files = {p: d for p, d in files.items() if p != value["path"] and not p.startswith(value["path"].rstrip("/") + "/")}
        if not header.get("summary"):
            return _error(400, "commit summary is required")
        oid = hashlib.sha1(json.dumps([repo.head, header, sorted((p, _git_oid(d)) for p, d in files.items())]).encode()).hexdigest()
        repo.files = files
        repo.commits.append({"oid": oid, "summary": header["summary"]})
        prefix = "" if repo.kind == "model" else f"{repo.kind}s/"
        return web.json_response({"commitUrl": f"{self.endpoint}/{prefix}{repo.repo_id}/commit/{oid}",
                                  "commitOid": oid, "success": True})

    async def revision(self, request: web.Request) -> web.Response:
        repo = self._repo(request)
        if repo is None:
            return _error(404, "Repository not found", "RepoNotFound")
        return web.json_response({"id": repo.repo_id, "sha": repo.head, "private": repo.private,
                                  "siblings": [{"rfilename": p} for p in sorted(repo.files)]})

    # -- lifecycle ---------------------------------------------------------------------------------
    async def start_async(self) -> None:
        self._runner = web.AppRunner(self.app(), access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()
        self.port = self._runner.addresses[0][1]

    async def stop_async(self) -> None:
        await self._runner.cleanup()
