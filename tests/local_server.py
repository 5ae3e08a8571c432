"""A scriptable local HTTP server for the download tests (tests/test_download.py,
tests/test_source_lock.py); the ``server`` fixture in tests/conftest.py starts one per test."""

from __future__ import annotations

import gzip
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Server:
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

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"
