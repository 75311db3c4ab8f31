"""The time a manifest records (a snapshot's or a saved fit's `created_at`).

Now, unless the environment sets ``SOURCE_DATE_EPOCH`` (the reproducible-builds convention:
whole seconds since 1970-01-01 UTC); then that time, so the same inputs give the same
bytes. The DVC pipeline sets it to the date of the newest source in the registry (dvc.yaml,
stages `snapshot` and `pretrained`), so that a fresh clone's `dvc repro` re-makes the
snapshot and the pre-fit model exactly as recorded in dvc.lock.

>>> import os
>>> os.environ["SOURCE_DATE_EPOCH"] = "1779408000"
>>> manifest_time().isoformat()
'2026-05-22T00:00:00+00:00'
>>> del os.environ["SOURCE_DATE_EPOCH"]
"""

from __future__ import annotations

import os
from datetime import datetime, timezone

from benchpress.errors import UsageError, shown

__all__ = ["manifest_time"]


def manifest_time() -> datetime:
    """``SOURCE_DATE_EPOCH`` as an aware UTC datetime when set (UsageError when it is not a
    whole number of seconds), else the current time."""
    raw = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if not raw:
        return datetime.now(timezone.utc)
    try:
        return datetime.fromtimestamp(int(raw), timezone.utc)
    except (ValueError, OverflowError, OSError):
        raise UsageError(f"SOURCE_DATE_EPOCH={shown(raw)} is not a whole number of seconds "
                         "since 1970-01-01 UTC; unset it or give one such as 1779408000") from None
