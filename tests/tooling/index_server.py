"""A package index on loopback: synthetic agent-framework-core sdists (PEP 691), and any files (PEP 503 pages).

``/simple/agent-framework-core/`` is what the tooling's sdist client reads; ``/pep503/<project>/`` is what pip and
uv read, listing the files added to :attr:`Index.projects`.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import threading
from collections.abc import Generator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SDIST_FILES = {
    "pyproject.toml": '[project]\nname = "agent-framework-core"\nversion = "{version}"\n',
    "README.md": "# synthetic core {version}\n",
    "LICENSE": "MIT\n",
    "PKG-INFO": "Metadata-Version: 2.1\n",
    "agent_framework/__init__.py": '__version__ = "{version}"\n',
    "agent_framework/_workflows/_runner.py": "line 1\nline 2\n",
}


def make_sdist(version: str) -> bytes:
    """A small sdist with the layout of agent-framework-core's."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, template in SDIST_FILES.items():
            data = template.format(version=version).encode()
            info = tarfile.TarInfo(f"agent_framework_core-{version}/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


class Index:
    """What the server offers: sdists by version, files by project, and what it served."""

    def __init__(self, versions: list[str], projects: dict[str, dict[str, bytes]] | None = None) -> None:
        self.sdists = {f"agent_framework_core-{v}.tar.gz": make_sdist(v) for v in versions}
        self.recorded_hashes = {name: hashlib.sha256(data).hexdigest() for name, data in self.sdists.items()}
        self.projects = projects or {}
        self.downloads = 0
        self.served: list[str] = []
        self.url = ""

    def file(self, name: str) -> bytes | None:
        """A file by name: an sdist or any project's file."""
        files = {**self.sdists, **{n: data for f in self.projects.values() for n, data in f.items()}}
        return files.get(name)

    def page(self, project: str) -> bytes:
        """The PEP 503 page of a project: a link per file, with its sha256."""
        links = [
            f'<a href="{self.url}/files/{name}#sha256={hashlib.sha256(data).hexdigest()}">{name}</a><br>'
            for name, data in self.projects.get(project, {}).items()
        ]
        return f"<!DOCTYPE html><html><body>{''.join(links)}</body></html>".encode()

    def listing(self) -> bytes:
        files = [
            {"filename": name, "url": f"{self.url}/files/{name}", "hashes": {"sha256": self.recorded_hashes[name]}}
            for name in self.sdists
        ]
        return json.dumps({"name": "agent-framework-core", "files": files}).encode()


@contextmanager
def serve_index(index: Index) -> Generator[Index, None, None]:
    """Serve ``index`` on 127.0.0.1 for the duration of the block."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            name = self.path.rsplit("/", 1)[-1]
            if self.path == "/simple/agent-framework-core/":
                self._send(index.listing())
            elif self.path.startswith("/pep503/") and self.path.endswith("/"):
                self._send(index.page(self.path.split("/")[2]), "text/html")
            elif self.path.startswith("/files/") and index.file(name) is not None:
                index.downloads += 1
                index.served.append(name)
                self._send(index.file(name) or b"")
            else:
                self.send_error(404)

        def do_HEAD(self) -> None:
            """uv asks for a file's headers first."""
            body = index.file(self.path.rsplit("/", 1)[-1]) if self.path.startswith("/files/") else None
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()

        def _send(self, body: bytes, content_type: str | None = None) -> None:
            self.send_response(200)
            if content_type:
                self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            """Keep test output quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    index.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield index
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
