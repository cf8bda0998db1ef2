"""A local file's IRI: `file:` and its absolute path, percent-encoded only where an IRI must be.

`Path.as_uri()` percent-encodes every character outside a URI's unreserved set, so
a folder `a+b` becomes `a%2Bb`: a different IRI from the `<file:///.../a+b/x>` a
user writes, and a query's relative IRIs resolved against it would not match the
names the user gives (`--stream`, `FROM <...>`). RFC 3987 allows `+`, the other
sub-delimiters, `:` and `@` and most of Unicode in a path as they are; only the
rest (space, `%`, `#`, `?`, `<`, `>`, quotes, controls, ...) is encoded here, as its
UTF-8 bytes. `runtime.datasets.local_path` reads such an IRI back (percent-decoding).

>>> file_iri("/tmp/a+b/ctx (1).ttl")
'file:///tmp/a+b/ctx%20(1).ttl'
>>> file_iri("/tmp/é#1")
'file:///tmp/é%231'
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote_from_bytes

#: what RFC 3987's ipath keeps as written among ASCII: iunreserved, sub-delims, ':', '@' and '/'
_ASCII = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/")


def _kept(char: str) -> bool:
    """Does an IRI path hold this character as it is (RFC 3987's ucschar, for non-ASCII)?"""
    if char in _ASCII:
        return True
    code = ord(char)
    if code < 0xA0 or 0xD800 <= code <= 0xF8FF or 0xFDD0 <= code <= 0xFDEF or code >= 0xF0000:
        return False  # controls, surrogates (undecodable bytes), private use, non-characters
    return (code & 0xFFFF) < 0xFFFE


def file_iri(path: str | Path) -> str:
    """The `file:` IRI of a local path, made absolute (`file:///C:/...` on Windows)."""
    absolute = Path(path).absolute().as_posix()
    if not absolute.startswith("/"):
        absolute = "/" + absolute
    return "file://" + "".join(char if _kept(char) else quote_from_bytes(os.fsencode(char), safe="")
                               for char in absolute)
