"""The one local HTTP server of the test suite (127.0.0.1), started once per session (the ``http``
fixture of tests/conftest.py), and what real servers do, replayed on it.

A test sets what a path answers in ``http.routes``: bytes (served as a static file server
does: 200 with a length, an ETag and ``Accept-Ranges``) or a function ``(handler, n)`` of the
request and its number on that path (1, 2, …), which answers with the helpers below.
``http.seen`` keeps each path's request headers (404 for a path without a route).
"""

from __future__ import annotations

import gzip
import hashlib
import socket
import struct
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

Route = bytes | Callable[[BaseHTTPRequestHandler, int], None]


class Server(ThreadingHTTPServer):
    """An HTTP/1.1 server on a free port of 127.0.0.1 answering from ``routes``."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.routes: dict[str, Route] = {}
        self.seen: dict[str, list[dict[str, str]]] = {}
        self.thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.02})
        self.thread.daemon = True
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{path}"

    def reset(self) -> None:
        self.routes.clear()
        self.seen.clear()

    def close(self) -> None:
        self.shutdown()
        self.server_close()
        self.thread.join(timeout=5)

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        path = urlsplit(handler.path).path
        calls = self.seen.setdefault(path, [])
        calls.append(dict(handler.headers))
        route = self.routes.get(path)
        if route is None:
            reply(handler, 404)
        elif isinstance(route, bytes):
            static_file(handler, route)
        else:
            route(handler, len(calls))


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Server

    def do_GET(self) -> None:
        self.server.answer(self)

    def log_message(self, *args) -> None:  # keep test output quiet
        pass


def reply(handler, status: int, body: bytes = b"", **headers: str) -> None:
    """One answer with its Content-Length (``Retry_After=`` → ``Retry-After:``)."""
    reply_head(handler, status, Content_Length=str(len(body)), **headers)
    handler.wfile.write(body)


def static_file(handler, data: bytes) -> None:
    """As nginx or GitHub's raw server serve a file, offering ranges (the download never asks
    for one: tests/test_download.py checks that)."""
    etag = f'"{hashlib.sha1(data).hexdigest()}"'
    reply(handler, 200, data, ETag=etag, Accept_Ranges="bytes")


def gzipped(data: bytes, always: bool = False) -> Callable[[BaseHTTPRequestHandler, int], None]:
    """A file gzipped on the way (``Content-Encoding: gzip``) where the request accepts gzip, as
    GitHub's raw server does for text, or ``always``, as a misconfigured server does."""

    def route(handler, n: int) -> None:
        if always or "gzip" in handler.headers.get("Accept-Encoding", ""):
            reply(handler, 200, gzip.compress(data, mtime=0), Content_Encoding="gzip")
        else:
            static_file(handler, data)

    return route


def reset_connection(handler) -> None:
    """Drop the connection with a TCP reset (RST) and no FIN before it, as a dropped connection
    does, once what was sent has had a moment to arrive."""
    time.sleep(0.05)
    handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    handler.connection.close()  # the reset goes once the handler's files close too
    handler.close_connection = True


def cut_after(handler, data: bytes, sent: int) -> None:
    """Announce ``data`` in full, send ``sent`` bytes, then drop the connection."""
    reply_head(handler, 200, Content_Length=str(len(data)))
    handler.wfile.write(data[:sent])
    reset_connection(handler)


def close_delimited(handler, data: bytes) -> None:
    """A body with neither length nor chunks, which ends where the connection does: dropped (RST)
    with no clean close."""
    reply_head(handler, 200, Connection="close")
    handler.wfile.write(data)
    reset_connection(handler)


def chunked(handler, data: bytes, complete: bool) -> None:
    """A chunked body, ending with its last chunk, or dropped before it."""
    reply_head(handler, 200, Transfer_Encoding="chunked")
    for start in range(0, len(data), 7000):
        piece = data[start : start + 7000]
        handler.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
    if complete:
        handler.wfile.write(b"0\r\n\r\n")
    else:
        reset_connection(handler)


def reply_head(handler, status: int, **headers: str) -> None:
    handler.send_response(status)
    for key, value in headers.items():
        handler.send_header(key.replace("_", "-"), value)
    handler.end_headers()


class FakeClock:
    """A download's clock (:class:`isotropy.sources.download.Clock`) on which time passes only
    when it is slept on or moved: waits are recorded, never waited."""

    def __init__(self) -> None:
        self.now, self.slept = 0.0, []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
