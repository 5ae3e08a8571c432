"""Local HTTP servers for the download and hub tests: :class:`LocalServer`, the one way they
start and stop, and :class:`Server`, a scriptable file server (tests/test_download.py,
tests/test_source_lock.py); the ``server`` fixture in tests/conftest.py starts one per test."""

from __future__ import annotations

import functools
import gzip
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType


class LocalServer:
    """A threading HTTP server on a free port of 127.0.0.1 answering with ``handler``; used as
    a context manager, it serves from a daemon thread inside the block and is shut down, its
    socket closed and its thread joined on the way out."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        # serve_forever checks for shutdown every poll_interval (0.5 s by default): a short
        # one keeps each test's teardown from waiting half a second.
        serve = functools.partial(self.httpd.serve_forever, poll_interval=0.02)
        self.thread = threading.Thread(target=serve, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def url(self, path: str) -> str:
        return self.endpoint + path

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


class Server(LocalServer):
    """Serves ``files`` (path → bytes); ``script`` (path → list of actions) overrides the next
    requests.

    An action is an HTTP status to answer with an empty body, or "truncate" (announce the full
    length, send 10 bytes, close: a connection reset mid-stream). ``encode`` (path → mode) sends
    a file with ``Content-Encoding: gzip`` and the length of what is sent, as real servers do:
    "negotiate" only when the request accepts gzip (GitHub's raw server), "always" whatever it
    asks, "label" the file's own bytes under that header (Apache's ``AddEncoding x-gzip .gz``).
    """

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.script: dict[str, list] = {}
        self.encode: dict[str, str] = {}
        self.requests: list[str] = []
        self.accept_encodings: list[str | None] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.requests.append(self.path)
                accept = self.headers.get("Accept-Encoding")
                server.accept_encodings.append(accept)
                actions = server.script.get(self.path)
                action = actions.pop(0) if actions else None
                body = server.files.get(self.path)
                mode = server.encode.get(self.path)
                if body is not None and mode is not None and action is None:
                    if mode == "always" or (mode == "negotiate" and "gzip" in (accept or "")):
                        body = gzip.compress(body)
                    if mode != "negotiate" or "gzip" in (accept or ""):
                        self.send_response(200)
                        self.send_header("Content-Encoding", "gzip")
                        self.send_header("Content-Length", str(len(body)))
                        self.end_headers()
                        self.wfile.write(body)
                        return
                if action == "truncate" and body is not None:
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body[:10])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                status = action if isinstance(action, int) else (200 if body is not None else 404)
                payload = body if status == 200 else b""
                self.send_response(status)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args) -> None:  # keep test output quiet
                pass

        super().__init__(Handler)
