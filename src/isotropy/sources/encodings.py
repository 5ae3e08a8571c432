"""Undoing a response's ``Content-Encoding`` (gzip, deflate) as a stream, within a size limit.

A server may send a body gzip- or deflate-encoded although identity was asked. The body is
decoded chunk by chunk, never whole in memory, and decoding stops (nothing kept) once the output
passes the limit (config ``downloads.max_extracted_bytes``, or a ``bytes`` pin): a small body
that decodes to gigabytes is a decompression bomb.
"""

from __future__ import annotations

import gzip
import shutil
import zlib
from collections.abc import Iterator
from pathlib import Path

from isotropy.sources.settings import ArchiveError, DownloadError

GZIP_MAGIC = b"\x1f\x8b"
CHUNK = 1 << 20


class BodyDecodeError(ValueError):
    """The encoded body does not decode (damaged in transit: worth fetching again)."""


def undo_content_encoding(
    wire: Path, out: Path, encoding: str, url: str, file_name: str, max_bytes: int
) -> None:
    """Write to ``out`` the file a body sent with ``Content-Encoding: encoding`` stands for.

    A gzip-encoded body is unzipped, except where the published file is itself gzip (``.gz``,
    ``.tgz``) and the unzipped body is not: then the server only labelled the file's own
    compression (Apache's ``AddEncoding x-gzip .gz``), and the body is the file.
    """
    try:
        if encoding in ("gzip", "x-gzip"):
            if file_name.lower().endswith((".gz", ".tgz")):
                with gzip.open(wire, "rb") as inner:
                    if inner.read(2) != GZIP_MAGIC:
                        shutil.copyfile(wire, out)
                        return
            chunks = _gunzip(wire)
        elif encoding == "deflate":
            chunks = _inflate(wire)
        else:
            raise DownloadError(
                f"{url} came with Content-Encoding {encoding!r}, which this downloader cannot "
                "undo; download the file by hand and read it from a mirror folder"
            )
        written = 0
        with open(out, "wb") as writer:
            for chunk in chunks:
                written += len(chunk)
                if written > max_bytes:
                    raise ArchiveError(
                        f"{url}: its {encoding}-encoded body decodes to more than {max_bytes} bytes, "
                        "which looks like a decompression bomb; nothing was kept. Check the source, or "
                        "raise downloads.max_extracted_bytes in the config if the file is known to be right"
                    )
                writer.write(chunk)
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise BodyDecodeError(f"the {encoding}-encoded body does not decode: {exc}") from exc


def _gunzip(path: Path) -> Iterator[bytes]:
    with gzip.open(path, "rb") as reader:  # every member of a multi-member body
        while chunk := reader.read(CHUNK):
            yield chunk


def _inflate(path: Path) -> Iterator[bytes]:
    """A deflate body: zlib-wrapped as the standard says, or raw as some servers send it."""
    with open(path, "rb") as reader:
        head = reader.read(2)
        reader.seek(0)
        wrapped = len(head) == 2 and head[0] & 0x0F == 8 and (head[0] << 8 | head[1]) % 31 == 0
        inflater = zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
        while data := reader.read(CHUNK):
            while data:
                yield inflater.decompress(data, CHUNK)
                data = inflater.unconsumed_tail
        yield inflater.flush()
