"""Uploaded files read into memory up to the size limit, under a safe base name.

    name, data = await read_upload(file, settings)

The name is the upload's base name (folders, ``..`` and control characters such as
NUL removed: ``services.exports.safe_name``); an empty result is a 400. The content
is read in chunks and refused with 413 ``BODY_TOO_LARGE`` (the shape
``body_limit.BodyTooLarge`` answers with) as soon as it goes over
``settings.inputs.max_upload_mb``; the whole request is already limited by ``BodyLimit``,
this limits each file.
"""

from __future__ import annotations

from fastapi import UploadFile

from keiri_agent.api.errors import ApiError
from keiri_agent.config import Settings
from keiri_agent.services.exports import safe_name

MIB = 2**20
CHUNK_BYTES = MIB


def upload_too_large(limit: int) -> ApiError:
    """413 for one uploaded file over ``limit`` bytes."""
    megabytes = limit // MIB
    return ApiError(
        413,
        "BODY_TOO_LARGE",
        f"アップロードするファイルが上限（{megabytes} MB）を超えています",
        f"The uploaded file is larger than the limit ({megabytes} MB)",
        "ファイルを分けるか小さくしてから送ってください。上限は管理者が設定で変えられます",
        "Split the file or make it smaller; an administrator can change the limit",
        {"limit_bytes": limit},
    )


def upload_name(filename: str | None) -> str:
    """The safe base name of an uploaded file; 400 ``UPLOAD_NAME_INVALID`` when none is left."""
    name = safe_name(filename)
    if not name:
        raise ApiError(
            400,
            "UPLOAD_NAME_INVALID",
            f"アップロードされたファイルの名前 {str(filename or '')[:80]!r} を使えません",
            f"The uploaded file's name {str(filename or '')[:80]!r} cannot be used",
            "拡張子つきのファイル名（例: manual.pdf）のファイルをアップロードしてください",
            "Upload a file with a name and extension (e.g. manual.pdf)",
            {"name": str(filename or "")[:200]},
        )
    return name


async def read_upload(file: UploadFile, settings: Settings) -> tuple[str, bytes]:
    """(safe name, content) of ``file``; 400 for an unusable name, 413 over the limit."""
    name = upload_name(file.filename)
    limit = settings.inputs.max_upload_mb * MIB
    chunks: list[bytes] = []
    total = 0
    while chunk := await file.read(CHUNK_BYTES):
        total += len(chunk)
        if total > limit:
            raise upload_too_large(limit)
        chunks.append(chunk)
    return name, b"".join(chunks)
