"""An Inspect AI log as its documented format holds it, read without inspect_ai: a ``.json`` log is
one JSON document (``version``, ``status``, ``eval``, ``plan``, ``results``, ``stats``, ``samples``,
``reductions``); an ``.eval`` log is a zip archive of the same, its header (``header.json``) and a
file per sample and epoch (``samples/<id>_epoch_<n>.json``), compressed with zstd (read through
``zstandard``: the extra ``scorelake[inspect]``)."""

from __future__ import annotations

import struct
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scorelake.transforms.sources._files import BadInput, load_json, parse_json_bytes

ZSTD = 93  # the zip compression method Inspect writes its archives with
MAX_MEMBER_BYTES = 256 * 1024 * 1024  # a sample's file past this is refused, not read


def is_eval_archive(path: Path) -> bool:
    """Whether ``path`` is an Inspect ``.eval`` archive (a zip holding ``header.json`` or its journal)."""
    if path.suffix != ".eval" or not path.is_file():
        return False
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
    except (OSError, zipfile.BadZipFile):
        return False
    return "header.json" in names or "_journal/start.json" in names


def _member(path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> Any:
    """One archive member's JSON: stored, deflated, or zstd (which the standard library cannot read)."""
    where = f"{path.name}:{info.filename}"
    if info.file_size > MAX_MEMBER_BYTES:
        raise BadInput(where, "file too large", f"{info.file_size} bytes > limit {MAX_MEMBER_BYTES}")
    if info.compress_type != ZSTD:
        data = archive.read(info)
    else:
        try:
            import zstandard
        except ImportError:
            raise BadInput(where, "an Inspect .eval archive is zstd-compressed: pip install 'scorelake[inspect]' "
                                  "(or export it as JSON: inspect log convert --to json)") from None
        with path.open("rb") as fh:
            fh.seek(info.header_offset)
            header = fh.read(30)
            name_length, extra_length = struct.unpack("<HH", header[26:30])
            fh.seek(info.header_offset + 30 + name_length + extra_length)
            compressed = fh.read(info.compress_size)
        try:
            data = zstandard.ZstdDecompressor().decompress(compressed, max_output_size=info.file_size)
        except zstandard.ZstdError as exc:
            raise BadInput(where, "unreadable zstd member", str(exc)) from None
    try:
        return parse_json_bytes(data)
    except (UnicodeDecodeError, ValueError) as exc:
        raise BadInput(where, "invalid JSON", str(exc)) from None


def _sample_order(name: str) -> tuple:
    """``samples/<id>_epoch_<n>.json`` in epoch order, then the order written."""
    stem = name.removeprefix("samples/").removesuffix(".json")
    sample, _, epoch = stem.rpartition("_epoch_")
    return (int(epoch) if epoch.isdigit() else 0, sample)


# A log: its header (everything but the samples) and a loader per sample, each with where it is (for errors)
Document = tuple[dict, list[tuple[str, Callable[[], Any]]]]


def eval_document(path: Path) -> Document:
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as exc:
        raise BadInput(path.name, "not a readable .eval archive", str(exc)) from None
    infos = {info.filename: info for info in archive.infolist()}
    if "header.json" not in infos:  # written while the eval ran: its start, its samples so far
        raise BadInput(path.name, "no header.json: the eval was still running (or was killed) when it was copied")
    header = _member(path, archive, infos["header.json"])
    if not isinstance(header, dict):
        raise BadInput(f"{path.name}:header.json", "schema violation at <root>: expected an object")
    names = sorted((n for n in infos if n.startswith("samples/") and n.endswith(".json")), key=_sample_order)
    return header, [(f"{path.name}:{n}", (lambda n=n: _member(path, archive, infos[n]))) for n in names]


def json_document(path: Path) -> Document:
    doc = load_json(path, path.parent)
    if not isinstance(doc, dict):
        raise BadInput(path.name, "schema violation at <root>: expected an object")
    samples = doc.get("samples") or []
    if not isinstance(samples, list):
        raise BadInput(path.name, "schema violation at samples: expected a list")
    return doc, [(f"{path.name}#samples[{i}]", (lambda s=s: s)) for i, s in enumerate(samples)]

