"""Raw sources: fetched into ``resources/raw/<source>/`` from their original URLs or a mirror.

Modules, in the order one download passes through them:

- :mod:`~isotropy.sources.plan`: what the workflow asks at parse time (the download rule's
  outputs and params, and whether every needed source is in the mirror);
- :mod:`~isotropy.sources.fetch`: :func:`fetch_source`, one source from a mirror, the hub or its
  URLs, laid out and swapped into its folder with a manifest;
- :mod:`~isotropy.sources.mirror`: the mirror folder, its MANIFEST.tsv, and the availability check
  that parse time and run time share;
- :mod:`~isotropy.sources.transfer`: one file over HTTP(S) (streaming, retries that resume
  with Range, Retry-After, one deadline, TLS that must close cleanly) or copied, and the
  sha256 / git-blob / size pins;
- :mod:`~isotropy.sources.transfer`: a Content-Encoding undone as a stream, within a limit;
- :mod:`~isotropy.sources.archives`: archive members within extraction limits;
- :mod:`~isotropy.sources.layouts`: per-kind raw layouts (``files`` copies a data set's files as
  they are, so a plain new source needs no layout code);
- :mod:`~isotropy.sources.word_vectors`: reading a word2vec source;
- :mod:`~isotropy.sources.settings`: environment switches, defaults and errors.
"""

from isotropy.sources.archives import ExtractionLimits, Fetched
from isotropy.sources.fetch import fetch_source, read_source_manifest, source_files
from isotropy.sources.layouts import LAYOUTS, build_mrpc_train, decode_text, source_kind
from isotropy.sources.mirror import (
    MirrorPin,
    mirror_path_problem,
    read_mirror_manifest,
    resolve_mirror,
)
from isotropy.sources.plan import (
    available_glue_tasks,
    check_sources_available,
    missing_mirror_files,
    source_dir,
    source_outputs,
    source_params,
    url_pins,
)
from isotropy.sources.settings import (
    ALLOW_UNVERIFIED_ENV,
    DOWNLOAD_DEFAULTS,
    HUB_FILE,
    MIRROR_ENV,
    ArchiveError,
    ChecksumError,
    DownloadError,
    UnverifiedFileError,
)
from isotropy.sources.transfer import download_file, git_blob_id, url_file_name, url_problem
from isotropy.sources.word_vectors import is_word2vec_binary, load_word_vectors, word_vectors_file

__all__ = [
    "ALLOW_UNVERIFIED_ENV",
    "DOWNLOAD_DEFAULTS",
    "HUB_FILE",
    "LAYOUTS",
    "MIRROR_ENV",
    "ArchiveError",
    "ChecksumError",
    "DownloadError",
    "ExtractionLimits",
    "Fetched",
    "MirrorPin",
    "UnverifiedFileError",
    "available_glue_tasks",
    "build_mrpc_train",
    "check_sources_available",
    "decode_text",
    "download_file",
    "fetch_source",
    "git_blob_id",
    "is_word2vec_binary",
    "load_word_vectors",
    "mirror_path_problem",
    "missing_mirror_files",
    "read_mirror_manifest",
    "read_source_manifest",
    "resolve_mirror",
    "source_dir",
    "source_files",
    "source_kind",
    "source_outputs",
    "source_params",
    "url_file_name",
    "url_pins",
    "url_problem",
    "word_vectors_file",
]
