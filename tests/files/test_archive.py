"""Two-tier ZIP/folder reading, including hostile archives."""

from __future__ import annotations

import io
import os
import struct
import unicodedata
import zipfile
from pathlib import Path

import pytest

from keiri_agent.errors import UserInputError
from keiri_agent.files.archive import (
    ROOT_GROUP,
    ArchiveError,
    ArchiveErrorCode,
    ArchiveLimits,
    read_folder_2tier,
    read_zip_2tier,
)


def make_zip(entries: dict[str, bytes], *, compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
    return buf.getvalue()


def raw_name_zip(raw_names: list[bytes]) -> bytes:
    """Entries whose name bytes are given verbatim and the UTF-8 flag is unset."""
    # zipfile would store non-ASCII names as UTF-8 with the flag set, so write ASCII
    # placeholders of the same length and patch the name bytes in both headers.
    placeholders = [f"{i:0{len(raw)}d}".encode() for i, raw in enumerate(raw_names)]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for raw, placeholder in zip(raw_names, placeholders, strict=True):
            zf.writestr(placeholder.decode(), b"content of " + raw)
    data = buf.getvalue()
    for raw, placeholder in zip(raw_names, placeholders, strict=True):
        assert data.count(placeholder) == 2
        data = data.replace(placeholder, raw)
    return data


def set_flag_bit(data: bytes, bit: int) -> bytes:
    """Set a general-purpose flag bit in every local and central header."""
    out = bytearray(data)
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        start = 0
        while (pos := out.find(signature, start)) >= 0:
            (flags,) = struct.unpack_from("<H", out, pos + offset)
            struct.pack_into("<H", out, pos + offset, flags | bit)
            start = pos + 4
    return bytes(out)


def codes(exc: pytest.ExceptionInfo[ArchiveError]) -> str:
    return exc.value.code


def test_two_tier_grouping_root_and_flattening() -> None:
    data = make_zip(
        {
            "readme.txt": b"root file",
            "A/a1.csv": b"1,2",
            "A/sub/deep.txt": b"deep",
            "B/b1.pdf": b"%PDF",
            "B/": b"",
        }
    )
    archive = read_zip_2tier(data)
    assert [g.name for g in archive.groups] == [ROOT_GROUP, "A", "B"]
    assert archive.root_prefix is None
    group_a = archive.group("A")
    assert [f.path for f in group_a.files] == ["A/a1.csv", "A/sub/deep.txt"]
    deep = group_a.files[1]
    assert (deep.name, deep.relative_path, deep.size, deep.data) == (
        "deep.txt",
        "sub/deep.txt",
        4,
        b"deep",
    )
    root_file = archive.group(ROOT_GROUP).files[0]
    assert (root_file.path, root_file.relative_path, root_file.data) == (
        "readme.txt",
        "readme.txt",
        b"root file",
    )
    assert len(archive.files) == 4
    assert archive.skipped == []


def test_single_wrapper_folder_is_unwrapped() -> None:
    data = make_zip({"証跡/A/x.txt": b"x", "証跡/B/y.txt": b"y"})
    archive = read_zip_2tier(data)
    assert archive.root_prefix == "証跡"
    assert [g.name for g in archive.groups] == ["A", "B"]
    assert archive.group("A").files[0].path == "A/x.txt"
    kept = read_zip_2tier(data, unwrap_single_root=False)
    assert [g.name for g in kept.groups] == ["証跡"]
    # a single group with its own files is a real group, not a wrapper
    single = read_zip_2tier(make_zip({"A/x.txt": b"x", "A/sub/y.txt": b"y"}))
    assert [g.name for g in single.groups] == ["A"] and single.root_prefix is None


def test_junk_nested_archives_and_duplicates_are_skipped() -> None:
    inner = make_zip({"inner.txt": b"i"})
    data = make_zip(
        {
            "__MACOSX/A/._x.txt": b"meta",
            "A/.DS_Store": b"ds",
            "A/Thumbs.db": b"t",
            "A/._x.txt": b"apple double",
            "A/x.txt": b"x",
            "A/nested.zip": inner,
            "A/book.xlsx": b"PK-office-file",
        }
    )
    archive = read_zip_2tier(data)
    assert [f.path for f in archive.files] == ["A/book.xlsx", "A/x.txt"]
    reasons = {s.path: s.reason for s in archive.skipped}
    assert reasons == {
        "__MACOSX/A/._x.txt": "system_file",
        "A/.DS_Store": "system_file",
        "A/Thumbs.db": "system_file",
        "A/._x.txt": "system_file",
        "A/nested.zip": "nested_archive",
    }


def test_duplicate_entry_is_skipped() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf, pytest.warns(UserWarning):
        zf.writestr("A/x.txt", b"first")
        zf.writestr("A/x.txt", b"second")
    archive = read_zip_2tier(buf.getvalue())
    assert [f.data for f in archive.files] == [b"first"]
    assert [(s.path, s.reason) for s in archive.skipped] == [("A/x.txt", "duplicate")]


@pytest.mark.parametrize(
    "name",
    ["../evil.txt", "A/../../evil.txt", "/etc/passwd", "C:/Windows/x.txt", "A\\..\\x.txt"],
)
def test_zip_slip_names_are_refused(name: str) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("A/ok.txt", b"ok")
        zf.writestr(zipfile.ZipInfo(name), b"evil")
    with pytest.raises(ArchiveError) as exc:
        read_zip_2tier(buf.getvalue())
    assert codes(exc) == ArchiveErrorCode.UNSAFE_PATH
    assert isinstance(exc.value, UserInputError)
    assert exc.value.details["entry"] == name


def test_zip_bomb_ratio_stops_while_streaming() -> None:
    zeros = b"\0" * (50 * 1024 * 1024)
    data = make_zip({"A/zeros.bin": zeros})
    assert len(data) < 100 * 1024
    limits = ArchiveLimits(max_file_bytes=100 * 1024 * 1024, max_ratio=100, ratio_min_bytes=1024)
    with pytest.raises(ArchiveError) as exc:
        read_zip_2tier(data, limits=limits)
    assert codes(exc) == ArchiveErrorCode.COMPRESSION_RATIO


def test_declared_size_over_file_limit_is_refused_early() -> None:
    data = make_zip({"A/zeros.bin": b"\0" * (2 * 1024 * 1024)})
    with pytest.raises(ArchiveError) as exc:
        read_zip_2tier(data, limits=ArchiveLimits(max_file_bytes=1024 * 1024))
    assert codes(exc) == ArchiveErrorCode.FILE_TOO_LARGE


def test_lying_header_size_is_caught_while_streaming() -> None:
    """A central directory claiming a tiny size: the streamed count or the CRC stops it."""
    data = bytearray(make_zip({"A/zeros.bin": b"\0" * (2 * 1024 * 1024)}))
    pos = data.find(b"PK\x01\x02")
    struct.pack_into("<I", data, pos + 24, 10)  # uncompressed size in central header
    with pytest.raises(ArchiveError) as exc:
        read_zip_2tier(bytes(data), limits=ArchiveLimits(max_file_bytes=1024 * 1024))
    assert codes(exc) in {ArchiveErrorCode.FILE_TOO_LARGE, ArchiveErrorCode.CORRUPT_ENTRY}


def test_total_size_limit_is_streamed() -> None:
    data = make_zip({f"A/f{i}.bin": os.urandom(40_000) for i in range(5)})
    with pytest.raises(ArchiveError) as exc:
        read_zip_2tier(data, limits=ArchiveLimits(max_total_bytes=100_000))
    assert codes(exc) == ArchiveErrorCode.TOTAL_TOO_LARGE


def test_too_many_entries() -> None:
    data = make_zip({f"A/f{i}.txt": b"x" for i in range(30)})
    with pytest.raises(ArchiveError) as exc:
        read_zip_2tier(data, limits=ArchiveLimits(max_entries=20))
    assert codes(exc) == ArchiveErrorCode.TOO_MANY_ENTRIES
    assert exc.value.details == {"entries": 30, "limit": 20}


def test_encrypted_entry_is_named() -> None:
    data = set_flag_bit(make_zip({"A/secret.txt": b"secret"}), 0x1)
    with pytest.raises(ArchiveError) as exc:
        read_zip_2tier(data)
    assert codes(exc) == ArchiveErrorCode.ENCRYPTED_ENTRY
    assert "A/secret.txt" in exc.value.message


def test_cp932_names_are_decoded() -> None:
    names = ["請求書/ソフト代.txt", "領収書/表.csv", "top.txt"]  # ソ and 表 end in 0x5C
    data = raw_name_zip([n.encode("cp932") for n in names])
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert all(not i.flag_bits & 0x800 for i in zf.infolist())
        assert zf.infolist()[0].filename != names[0]  # Python alone gets it wrong
    archive = read_zip_2tier(data)
    assert sorted(f.path for f in archive.files) == sorted(names)
    assert [g.name for g in archive.groups] == ["", "請求書", "領収書"]
    assert archive.group("請求書").files[0].data == b"content of " + names[0].encode("cp932")


def test_utf8_names_without_flag_and_undecodable_names() -> None:
    data = raw_name_zip(["資料/a.txt".encode(), b"X/\x85@.txt"])
    paths = {f.path for f in read_zip_2tier(data).files}
    assert "資料/a.txt" in paths
    assert "X/" + b"\x85@".decode("cp437") + ".txt" in paths  # kept as cp437


def test_empty_garbage_and_empty_archive() -> None:
    with pytest.raises(ArchiveError) as exc:
        read_zip_2tier(b"")
    assert codes(exc) == ArchiveErrorCode.EMPTY_FILE
    with pytest.raises(ArchiveError) as exc:
        read_zip_2tier(b"this is not a zip file at all" * 10)
    assert codes(exc) == ArchiveErrorCode.NOT_A_ZIP
    empty = read_zip_2tier(make_zip({}))
    assert empty.groups == [] and empty.skipped == []


def test_corrupt_entry_data() -> None:
    data = bytearray(make_zip({"A/x.txt": b"hello world" * 100}))
    pos = data.find(b"PK\x03\x04") + 30 + len("A/x.txt")
    data[pos : pos + 20] = b"\xff" * 20
    with pytest.raises(ArchiveError) as exc:
        read_zip_2tier(bytes(data))
    assert codes(exc) == ArchiveErrorCode.CORRUPT_ENTRY


def test_symlink_entry_in_zip_is_skipped() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        info = zipfile.ZipInfo("A/link")
        info.external_attr = 0o120777 << 16
        zf.writestr(info, "/etc/passwd")
        zf.writestr("A/x.txt", b"x")
    archive = read_zip_2tier(buf.getvalue())
    assert [f.path for f in archive.files] == ["A/x.txt"]
    assert [(s.path, s.reason) for s in archive.skipped] == [("A/link", "symlink")]


def test_nothing_is_written_to_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("TMPDIR", str(work))
    data = make_zip({"A/x.txt": b"x", "B/y/z.txt": b"z", "../evil": b"e"})
    with pytest.raises(ArchiveError):
        read_zip_2tier(data)
    read_zip_2tier(make_zip({"A/x.txt": b"x", "B/y/z.txt": b"z"}))
    assert list(work.rglob("*")) == []


def test_read_folder(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "A" / "sub").mkdir(parents=True)
    (root / "B").mkdir()
    (root / "top.txt").write_bytes(b"t")
    (root / "A" / "a.txt").write_bytes(b"a")
    (root / "A" / "sub" / "d.txt").write_bytes(b"d")
    (root / "B" / "Thumbs.db").write_bytes(b"junk")
    (root / "B" / "old.zip").write_bytes(b"PK")
    outside = tmp_path / "secret.txt"
    outside.write_bytes(b"secret")
    (root / "B" / "escape.txt").symlink_to(outside)
    (root / "B" / "inside.txt").symlink_to(root / "A" / "a.txt")
    (root / "B" / "loop").symlink_to(root)
    os.mkfifo(root / "B" / "fifo")
    archive = read_folder_2tier(root)
    assert [g.name for g in archive.groups] == [ROOT_GROUP, "A", "B"]
    assert [f.path for f in archive.files] == ["top.txt", "A/a.txt", "A/sub/d.txt", "B/inside.txt"]
    assert archive.group("B").files[0].data == b"a"
    assert b"secret" not in [f.data for f in archive.files]
    reasons = {s.path: s.reason for s in archive.skipped}
    assert reasons == {
        "B/Thumbs.db": "system_file",
        "B/old.zip": "nested_archive",
        "B/escape.txt": "symlink",
        "B/loop": "symlink",
        "B/fifo": "special_file",
    }


def test_read_folder_limits_and_errors(tmp_path: Path) -> None:
    with pytest.raises(ArchiveError) as exc:
        read_folder_2tier(tmp_path / "missing")
    assert codes(exc) == ArchiveErrorCode.NOT_A_FOLDER
    (tmp_path / "A").mkdir()
    (tmp_path / "A" / "big.bin").write_bytes(b"\0" * 5000)
    with pytest.raises(ArchiveError) as exc:
        read_folder_2tier(tmp_path, limits=ArchiveLimits(max_file_bytes=4000))
    assert codes(exc) == ArchiveErrorCode.FILE_TOO_LARGE
    for i in range(5):
        (tmp_path / "A" / f"f{i}.txt").write_bytes(b"x")
    with pytest.raises(ArchiveError) as exc:
        read_folder_2tier(tmp_path, limits=ArchiveLimits(max_entries=3))
    assert codes(exc) == ArchiveErrorCode.TOO_MANY_ENTRIES


def test_nfd_names_from_macos_are_normalised_to_nfc() -> None:
    nfd = unicodedata.normalize("NFD", "ガス代/領収書.pdf")
    assert nfd != "ガス代/領収書.pdf"
    archive = read_zip_2tier(make_zip({nfd: b"x", "ガス代/メモ.txt": b"m"}))
    assert [g.name for g in archive.groups] == ["ガス代"]
    assert [f.path for f in archive.files] == ["ガス代/メモ.txt", "ガス代/領収書.pdf"]
    without_flag = read_zip_2tier(raw_name_zip([nfd.encode()]))
    assert [f.path for f in without_flag.files] == ["ガス代/領収書.pdf"]


def test_names_equal_after_nfc_are_duplicates() -> None:
    nfc = "ガス代/領収書.pdf"
    archive = read_zip_2tier(make_zip({nfc: b"first", unicodedata.normalize("NFD", nfc): b"2"}))
    assert [(f.path, f.data) for f in archive.files] == [(nfc, b"first")]
    assert [(s.path, s.reason) for s in archive.skipped] == [(nfc, "duplicate")]


def test_read_folder_normalises_nfd_names(tmp_path: Path) -> None:
    nfc, nfd = "ガス代", unicodedata.normalize("NFD", "ガス代")
    (tmp_path / nfd / "sub").mkdir(parents=True)
    (tmp_path / nfd / "sub" / unicodedata.normalize("NFD", "領収書.pdf")).write_bytes(b"1")
    (tmp_path / nfd / "メモ.txt").write_bytes(b"2")
    (tmp_path / nfc).mkdir()  # a separate folder on Linux, the same name after NFC
    (tmp_path / nfc / "メモ.txt").write_bytes(b"3")
    archive = read_folder_2tier(tmp_path)
    assert [g.name for g in archive.groups] == [nfc]
    assert [f.path for f in archive.files] == [f"{nfc}/sub/領収書.pdf", f"{nfc}/メモ.txt"]
    assert [(s.path, s.reason) for s in archive.skipped] == [(f"{nfc}/メモ.txt", "duplicate")]
