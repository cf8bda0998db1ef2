"""Engine state stored and read back as plain, versioned, authenticated data: never a pickle, never code.

A checkpoint (the Spark driver's state, a partitioned key's engine) is written
by one process and read by another, maybe by another version of rsp_plugin,
from a directory someone else may write to. A pickle would run whatever code
the file names; this codec reads data only, and only data it can authenticate:

    key = checkpoint_key(directory)      # the key beside the checkpoint (made at the first write), or one given
    data = dumps(engine, key=key)        # bytes: a JSON header line, then the JSON object graph
    engine = loads(data, key=key)        # StateError for a foreign, torn, tampered or other-version file

Authentication: the header carries an HMAC-SHA256 of the format, its version and
the payload under a secret key. Whoever changes a file without the key cannot
make it pass (a plain checksum, which the editor computes again, would). The key
is the user's (`--checkpoint-key FILE`, or the file named by $RSP_PLUGIN_CHECKPOINT_KEY)
or else 32 random bytes (hex) made at the first write in `<checkpoint>/rsp-plugin.key`,
created with mode 0600. A key file that group or others may read or write, or
that belongs to another user, is refused with one line saying how to fix it.
A state that does not authenticate is refused, never read.

What is stored: the object graph of the classes registered in `SCHEMA` (each with
the fields it may have and the kinds of their values; their `__getstate__`, as
pickle would take it) over plain values: None, bool, int, float, str, bytes,
Decimal, list, tuple, dict, set, frozenset, deque, paths, rdflib terms and graphs
(as N-Triples), Arrow tables (IPC), numeric numpy arrays. Shared objects and
mutable containers keep their identity (a view read by two rule plans is one view
again). Term ids are whatever ints the Dictionary uses, dense or not.

What is never stored: callables, and rules as structures. Compiled rule plans
drop their functions and are compiled again on load; a rule is stored as the
program text it was parsed from and its place in it, and is parsed again on load
(`rsp_plugin.lars.program.Origin`); a query is stored as its text and parsed
again; subscribers are not state (`RSPEngine.__getstate__`): subscribe again. A
value of any other type, or an object of a class or with a field `SCHEMA` does not
name, is refused when the state is written, and again when it is read.

What reading can do, once the state authenticates: create instances of the
registered classes, fill the registered fields and call their own
`__setstate__`; parse a program or a query again from its text. No string read
back becomes code: the rule plans' code is made of names, term ids and operators
of the plan compiler's own (`rsp_plugin.lars.plan`).

>>> from collections import deque
>>> key = b"a key of at least 16 bytes"
>>> shared = [1, 2]
>>> value = {"a": (shared, shared), 3: deque([1.5, None], maxlen=4), "s": {frozenset({1})}}
>>> back = loads(dumps(value, key=key), key=key)
>>> back == value and back["a"][0] is back["a"][1] and back[3].maxlen == 4
True
>>> loads(dumps(value, key=key), key=b"another key, as long as that", source="chk/state-3.json")
Traceback (most recent call last):
...
rsp_plugin.runtime.state.StateError: chk/state-3.json: the state does not authenticate with this checkpoint's key (changed after it was written, written with another key, or cut short); refused
>>> loads(b"\\x80\\x04K\\x01.", key=key)
Traceback (most recent call last):
...
rsp_plugin.runtime.state.StateError: <state>: a pickle (state format 0, written by rsp-plugin 0.1.0 before format 1): it is never loaded, since unpickling runs code; this rsp-plugin reads state format 2 only: start from a new checkpoint directory
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import math
import os
import secrets
import stat
import sys
from collections import Counter, OrderedDict, defaultdict, deque
from decimal import Decimal
from pathlib import Path, PurePath

from .state_schema import ANY, CUSTOM, ENUM, SCHEMA

FORMAT = "rsp-plugin-state"
#: 2: this JSON object graph, authenticated (HMAC-SHA256). 1 was the same with a plain SHA-256 (anyone
#: could write it again), 0 the pickle files (`state-N.pickle`) of rsp-plugin 0.1.0.
VERSION = 2
_PACKAGE = "rsp_plugin"
#: the key file a checkpoint directory keeps when no key is given
KEY_FILE = "rsp-plugin.key"
#: names a key file to use instead (what `--checkpoint-key FILE` gives)
KEY_ENV = "RSP_PLUGIN_CHECKPOINT_KEY"
#: a shorter key is refused
MIN_KEY_BYTES = 16


class StateError(ValueError):
    """A state that is not written or not read, said in one line."""


# Writing ---------------------------------------------------------------------------------------------------

_PRIMITIVE = (type(None), bool, int, str)
_CONTAINERS = (list, tuple, set, frozenset, deque, dict, bytearray, Counter, OrderedDict, defaultdict)
#: the factories a stored defaultdict may have (builtins: no code of the state's)
_FACTORIES = {None: None, "list": list, "set": set, "dict": dict, "int": int}


def dumps(root, *, key: bytes) -> bytes:
    """`root` as bytes: one JSON header line (with the payload's HMAC under `key`), then the JSON payload."""
    writer = _Writer()
    payload = json.dumps({"root": writer.encode(root), "objects": writer.table},
                         separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")
    header = {"format": FORMAT, "version": VERSION, "written_by": f"rsp-plugin {_version()}",
              "hmac_sha256": _mac(_checked_key(key), payload), "bytes": len(payload)}
    return json.dumps(header, separators=(",", ":")).encode("ascii") + b"\n" + payload


def _mac(key: bytes, payload: bytes) -> str:
    """HMAC-SHA256 of the format, its version and the payload: a state of another format cannot pass for this one."""
    return hmac.new(key, f"{FORMAT} {VERSION}\n".encode("ascii") + payload, hashlib.sha256).hexdigest()


def _checked_key(key) -> bytes:
    if not isinstance(key, (bytes, bytearray)) or len(key) < MIN_KEY_BYTES:
        raise StateError(f"a state is authenticated with a key of at least {MIN_KEY_BYTES} bytes")
    return bytes(key)


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("rsp_plugin")
    except Exception:  # not installed (a source tree): the format version is what matters
        return "unknown"


class _Writer:
    """Two passes: count who refers to what (shared things go to a table), then encode."""

    def __init__(self):
        self.table: list = []
        self._index: dict[int, int] = {}
        self._states: dict[int, tuple] = {}
        self._seen: dict[int, int] = {}
        self._keep: list = []  # keeps the states made by __getstate__ alive, so that ids stay unique

    # pass 1 ----------------------------------------------------------------------------------------------

    def _census(self, root) -> None:
        seen = self._seen
        stack = [root]
        while stack:
            value = stack.pop()
            kind = type(value)
            if kind in _PRIMITIVE or kind is float:
                continue
            if kind is tuple or kind is frozenset:
                if _plain(value):
                    continue
            elif not (kind in _CONTAINERS or _is_object(value)):
                continue
            key = id(value)
            count = seen.get(key, 0)
            seen[key] = count + 1
            if count:
                continue
            if kind in (list, tuple, set, frozenset, deque):
                stack.extend(value)
            elif kind in (dict, Counter, OrderedDict, defaultdict):
                stack.extend(value.keys())
                stack.extend(value.values())
            elif kind is bytearray:
                continue
            else:
                form = self._form(value)
                stack.append(form[2])

    def _form(self, value) -> tuple:
        """("o", class name, state) or ("e", enumeration name, value): how an object is stored."""
        key = id(value)
        found = self._states.get(key)
        if found is not None:
            return found
        name = _name(type(value))
        spec = SCHEMA.get(name)
        if spec is None:
            raise StateError(f"cannot store a {name}: not a class a state may hold (rsp_plugin.runtime.state_schema)")
        if spec is CUSTOM:
            form = ("o", name, _CUSTOM[name][0](value))
        elif spec is ENUM:
            form = ("e", name, value.value)
        else:
            state = value.__getstate__()
            _check_fields(name, spec, state, _refuse_to_store)
            form = ("o", name, state)
        self._keep.append(form)
        self._states[key] = form
        return form

    # pass 2 ----------------------------------------------------------------------------------------------

    def encode(self, root):
        self._census(root)
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 20_000))
        try:
            return self._value(root)
        except RecursionError:
            raise StateError("cannot store the state: its containers are nested too deeply") from None
        finally:
            sys.setrecursionlimit(limit)

    def _value(self, value):
        kind = type(value)
        if kind in _PRIMITIVE:
            return value
        if kind is float:
            return value if math.isfinite(value) else ["f", repr(value)]
        if (kind is tuple or kind is frozenset) and _plain(value):
            if kind is tuple and all(type(v) is int for v in value):
                return ["t", *value]
            return ["t" if kind is tuple else "z", *[v if type(v) is not float or math.isfinite(v)
                                                      else ["f", repr(v)] for v in value]]
        if _is_object(value):
            return ["r", self._entry(value)]
        if kind in _CONTAINERS:
            if self._seen.get(id(value), 0) > 1:
                return ["r", self._entry(value)]
            return self._inline(value)
        return self._foreign(value)

    def _entry(self, value) -> int:
        key = id(value)
        index = self._index.get(key)
        if index is not None:
            return index
        index = self._index[key] = len(self.table)
        self.table.append(None)  # a place first: a cycle back to it is a reference
        if _is_object(value):
            tag, name, state = self._form(value)
            if tag == "e":
                self.table[index] = ["e", name, self._value(state)]
            else:
                self.table[index] = ["o", name, self._value(state)]
        else:
            self.table[index] = self._inline(value)
        return index

    def _inline(self, value):
        kind = type(value)
        encode = self._value
        if kind is list:
            return ["l", *[encode(v) for v in value]]
        if kind is tuple:
            return ["t", *[encode(v) for v in value]]
        if kind is dict:
            if all(type(k) is str for k in value):
                return ["m", {k: encode(v) for k, v in value.items()}]
            out = ["d"]
            for k, v in value.items():
                out.append(encode(k))
                out.append(encode(v))
            return out
        if kind is set:
            return ["s", *[encode(v) for v in value]]
        if kind is frozenset:
            return ["z", *[encode(v) for v in value]]
        if kind is deque:
            return ["q", value.maxlen, *[encode(v) for v in value]]
        if kind in (Counter, OrderedDict, defaultdict):
            tag = {Counter: "C", OrderedDict: "O"}.get(kind)
            if tag is None:
                factory = value.default_factory
                name = getattr(factory, "__name__", None) if factory is not None else None
                if factory is not None and _FACTORIES.get(name) is not factory:
                    raise StateError(f"cannot store a defaultdict of {factory!r}: its factory is code")
                tag = ["x", name]
            out = [tag] if isinstance(tag, str) else tag
            for k, v in value.items():
                out.append(encode(k))
                out.append(encode(v))
            return out
        if kind is bytearray:
            return ["y", base64.b64encode(bytes(value)).decode("ascii")]
        raise AssertionError(kind)  # pragma: no cover

    def _foreign(self, value):
        """Values of other libraries a state may hold, each as plain data."""
        if isinstance(value, bytes):
            return ["b", base64.b64encode(value).decode("ascii")]
        if isinstance(value, Decimal):
            return ["D", str(value)]
        if isinstance(value, PurePath):
            return ["p", str(value)]
        module = type(value).__module__.split(".")[0]
        if module == "rdflib":
            return _rdflib_value(value)
        if module in ("pyarrow", "polars"):
            return _arrow_value(value)
        if module == "numpy":
            return _numpy_value(value, self._value)
        if callable(value):
            raise StateError(f"cannot store a callable ({getattr(value, '__qualname__', type(value).__name__)}): "
                             "functions are code, not state")
        raise StateError(f"cannot store a {type(value).__module__}.{type(value).__qualname__}: "
                         "not a type a state may hold")


def _plain(values) -> bool:
    for v in values:
        kind = type(v)
        if kind not in _PRIMITIVE and kind is not float:
            return False
    return True


_OURS: dict[type, bool] = {}


def _is_object(value) -> bool:
    """An instance of one of rsp_plugin's classes (cached per type: this is asked of every value)."""
    kind = type(value)
    found = _OURS.get(kind)
    if found is None:
        module = kind.__module__
        found = _OURS[kind] = (module == _PACKAGE or module.startswith(_PACKAGE + ".")) and not issubclass(kind, type)
    return found


def _fields(state) -> dict | None:
    """The fields of an object's state as `__getstate__` gives it: a mapping, (mapping, slots), or None."""
    if state is None:
        return {}
    if type(state) is dict:
        return state
    if type(state) is tuple and len(state) == 2 and all(part is None or type(part) is dict for part in state):
        return {**(state[0] or {}), **(state[1] or {})}
    return None


def _check_fields(name: str, spec: dict, state, fail) -> None:
    """Every field of `state` is one `SCHEMA` names for the class `name`, holding a value of a kind it names."""
    fields = _fields(state)
    if fields is None:
        fail(f"the state of a {name} is not a mapping of its fields")
    for field, value in fields.items():
        kinds = spec.get(field) if type(field) is str else None
        if kinds is None:
            fail(f"a {name} has no field {str(field)[:40]!r} (rsp_plugin.runtime.state_schema)")
        if kinds is ANY or _is_kind(value, kinds):
            continue
        fail(f"{name}.{field} holds a {_name(type(value)) if _is_object(value) else type(value).__name__}, "
             "not a kind rsp_plugin.runtime.state_schema names for it")


def _is_kind(value, kinds: tuple) -> bool:
    for kind in kinds:
        if kind is None:
            if value is None:
                return True
        elif type(kind) is str:
            if _is_object(value) and _name(type(value)) == kind:
                return True
        elif isinstance(value, kind):
            return True
    return False


def _refuse_to_store(message: str):
    raise StateError(f"cannot store the state: {message}")


def _name(thing) -> str:
    return f"{thing.__module__}:{thing.__qualname__}"


def _rdflib_value(value):
    from rdflib import BNode, Graph, Literal, URIRef, Variable

    from ..core.rdfterms import term_key

    if isinstance(value, Variable):
        return ["V", str(value)]
    if isinstance(value, (URIRef, Literal, BNode)):
        return ["n", term_key(value)]
    if type(value) is Graph:
        text = value.serialize(format="nt", encoding="utf-8").decode("utf-8")
        return ["g", None if isinstance(value.identifier, BNode) else str(value.identifier), text]
    raise StateError(f"cannot store a {type(value).__module__}.{type(value).__qualname__}: not a type a state may hold")


def _arrow_value(value):
    import pyarrow as pa

    kind = "pl" if type(value).__module__.startswith("polars") else "pa"
    table = value.to_arrow() if kind == "pl" else value
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    if not isinstance(table, pa.Table):
        raise StateError(f"cannot store a {type(value).__qualname__}: only Arrow / Polars tables")
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as stream:
        stream.write_table(table)
    return ["a", kind, base64.b64encode(sink.getvalue().to_pybytes()).decode("ascii")]


# Reading ---------------------------------------------------------------------------------------------------


def loads(data: bytes, *, key: bytes | None, source: str = "<state>"):
    """The value `dumps` wrote with `key`; `StateError` (naming `source`, in one line) for anything
    else. Nothing of the payload is read before it authenticates."""
    payload = authenticated(data, key=key, source=source)
    try:
        document = json.loads(payload)
        reader = _Reader(document["objects"], source)
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 20_000))
        try:
            return reader.value(document["root"])
        finally:
            sys.setrecursionlimit(limit)
    except StateError:
        raise
    except RecursionError:
        raise StateError(f"{source}: the state is nested too deeply; refused") from None
    except Exception as error:  # a well-formed header over a malformed payload
        raise StateError(f"{source}: not a readable state ({type(error).__name__}: {error}); refused") from None


def authenticated(data: bytes, *, key: bytes | None, source: str = "<state>") -> bytes:
    """The payload of a state `dumps` wrote with `key`, not read yet; `StateError` (naming `source`, in
    one line) for a foreign file, a pickle, another format, or a state that does not authenticate."""
    header, payload = _split(data, source)
    version = header.get("version")
    if version != VERSION:
        written = str(header.get("written_by", "an unknown version"))[:60]
        unkeyed = ", not authenticated" if version == 1 else ""
        raise StateError(f"{source}: state format {str(version)[:20]} (written by {written}{unkeyed}); "
                         f"this rsp-plugin reads state format {VERSION} only: start from a new checkpoint directory")
    if key is None:
        raise StateError(f"{source}: no key to authenticate the state with (its checkpoint's {KEY_FILE} is missing, "
                         f"and no --checkpoint-key or ${KEY_ENV} was given); refused")
    mac = header.get("hmac_sha256")
    if not isinstance(mac, str) or not hmac.compare_digest(mac, _mac(_checked_key(key), payload)):
        raise StateError(f"{source}: the state does not authenticate with this checkpoint's key (changed after "
                         "it was written, written with another key, or cut short); refused")
    return payload


def _split(data: bytes, source: str) -> tuple[dict, bytes]:
    data = bytes(data)
    if data[:1] == b"\x80":
        raise StateError(f"{source}: a pickle (state format 0, written by rsp-plugin 0.1.0 before format 1): "
                         f"it is never loaded, since unpickling runs code; this rsp-plugin reads state format "
                         f"{VERSION} only: start from a new checkpoint directory")
    line, newline, payload = data.partition(b"\n")
    try:
        header = json.loads(line) if newline else None
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise StateError(f"{source}: not an rsp-plugin state (no '{FORMAT}' header); refused")
    return header, payload


class _Reader:
    def __init__(self, table: list, source: str):
        self.table = table
        self.source = source
        self.made: dict[int, object] = {}
        self.making: set[int] = set()
        self.tuples: dict = {}
        #: id(Origin) -> the rules its text parses to (each program is parsed once per load)
        self.parsed: dict[int, list] = {}

    def fail(self, message: str):
        raise StateError(f"{self.source}: {message}; refused")

    def value(self, item):
        if type(item) is not list:
            if isinstance(item, dict) or isinstance(item, float) and not math.isfinite(item):
                self.fail("a value that is not tagged")
            return item
        if not item:
            self.fail("an empty entry")
        tag = item[0]
        if tag == "r":
            return self.ref(item[1])
        if tag == "t":
            made = tuple(self.value(v) for v in item[1:])
            try:
                return self.tuples.setdefault(made, made)  # equal tuples are one again (memory)
            except TypeError:
                return made
        return self.build(item, None)

    def build(self, item, index):
        tag = item[0]
        value = self.value
        if tag == "l":
            out = []
            self._remember(index, out)
            out.extend(value(v) for v in item[1:])
            return out
        if tag == "m":
            out = {}
            self._remember(index, out)
            if not isinstance(item[1], dict):
                self.fail("a malformed mapping")
            for k, v in item[1].items():
                out[k] = value(v)
            return out
        if tag == "d":
            out = {}
            self._remember(index, out)
            pairs = item[1:]
            for k, v in zip(pairs[::2], pairs[1::2]):
                out[value(k)] = value(v)
            return out
        if tag in ("C", "O", "x"):
            if tag == "x":
                if item[1] not in _FACTORIES:
                    self.fail(f"a defaultdict of {item[1]!r}")
                out, pairs = defaultdict(_FACTORIES[item[1]]), item[2:]
            else:
                out, pairs = (Counter() if tag == "C" else OrderedDict()), item[1:]
            self._remember(index, out)
            for k, v in zip(pairs[::2], pairs[1::2]):
                out[value(k)] = value(v)
            return out
        if tag == "s":
            out = set()
            self._remember(index, out)
            out.update(value(v) for v in item[1:])
            return out
        if tag == "q":
            out = deque(maxlen=item[1])
            self._remember(index, out)
            out.extend(value(v) for v in item[2:])
            return out
        if tag == "t":
            return tuple(value(v) for v in item[1:])
        if tag == "z":
            return frozenset(value(v) for v in item[1:])
        if tag == "y":
            return bytearray(base64.b64decode(item[1]))
        if tag == "b":
            return base64.b64decode(item[1])
        if tag == "f":
            return float(item[1])
        if tag == "D":
            return Decimal(item[1])
        if tag == "p":
            return Path(item[1])
        if tag == "n":
            from ..core.rdfterms import key_term

            return key_term(item[1])
        if tag == "V":
            from rdflib import Variable

            return Variable(item[1])
        if tag == "g":
            from rdflib import Graph

            graph = Graph(identifier=item[1]) if item[1] is not None else Graph()
            return graph.parse(data=item[2], format="nt")
        if tag == "a":
            return _arrow_back(item[1], item[2])
        if tag == "N" and len(item) == 4:
            return _numpy_back(item[1], item[2], item[3], self.fail)
        if tag in ("o", "e") and len(item) == 3:
            return self.instance(item, index)
        self.fail(f"an unknown entry tag {tag!r}")

    def _remember(self, index, value) -> None:
        if index is not None:
            self.made[index] = value

    def ref(self, index):
        if type(index) is not int or not 0 <= index < len(self.table):
            self.fail("a reference out of range")
        found = self.made.get(index)
        if found is not None or index in self.made:
            return found
        if index in self.making:
            self.fail("an immutable value that contains itself")
        self.making.add(index)
        try:
            made = self.build(self.table[index], index)
        finally:
            self.making.discard(index)
        self.made[index] = made
        return made

    def instance(self, item, index):
        """An object of a class `SCHEMA` names, with the fields it names for it (checked before they are set)."""
        tag, name = item[0], item[1]
        spec = SCHEMA.get(name) if type(name) is str else None
        if spec is None:
            self.fail(f"{str(name)[:80]!r} is not a class a state may hold (rsp_plugin.runtime.state_schema)")
        if tag == "e" or spec is ENUM:
            if not (tag == "e" and spec is ENUM):
                self.fail(f"{name} stored as {'an enumeration' if tag == 'e' else 'an object'}, which it is not")
            value = self.value(item[2])
            if type(value) not in (str, int):
                self.fail(f"a {name} of a {type(value).__name__}")
            try:
                return _resolve(name)(value)
            except ValueError:
                self.fail(f"{value!r} is not a {name}")
        if spec is CUSTOM:
            obj = _CUSTOM[name][1](self.value(item[2]), self)
            self._remember(index, obj)
            return obj
        cls = _resolve(name)
        obj = cls.__new__(cls)
        self._remember(index, obj)
        state = self.value(item[2])
        _check_fields(name, spec, state, self.fail)
        setter = getattr(cls, "__setstate__", None)
        if setter is not None:
            obj.__setstate__(state)
        else:
            _fill(obj, state, self)
        return obj


def _fill(obj, state, reader: _Reader) -> None:
    """Pickle's default: the instance dict, and slots given as a second mapping."""
    slots = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    if state is not None:
        if not isinstance(state, dict) or not all(type(k) is str for k in state):
            reader.fail(f"the state of a {type(obj).__qualname__} is not a mapping of attributes")
        obj.__dict__.update(state)
    if slots is not None:
        if not isinstance(slots, dict):
            reader.fail(f"the slots of a {type(obj).__qualname__} are not a mapping")
        for key, value in slots.items():
            object.__setattr__(obj, key, value)


def _resolve(name: str):
    """The class `SCHEMA` names `name` (module:qualname): its module imported, the class looked up in it."""
    from importlib import import_module

    module_name, _, qualname = name.partition(":")
    found = import_module(module_name)
    for part in qualname.split("."):
        found = vars(found)[part]
    return found


#: numpy dtypes a state may hold (numbers and booleans, in either byte order): no objects, no strings
_NUMPY_KINDS = "biuf"


def _numpy_value(value, encode):
    """A numeric numpy array as its dtype, shape and bytes; a numpy number as the Python number."""
    import numpy as np

    if isinstance(value, np.generic) and value.dtype.kind in _NUMPY_KINDS:
        return encode(value.item())
    if isinstance(value, np.ndarray) and value.dtype.kind in _NUMPY_KINDS:
        data = np.ascontiguousarray(value).tobytes()
        return ["N", value.dtype.str, list(value.shape), base64.b64encode(data).decode("ascii")]
    raise StateError(f"cannot store a numpy {type(value).__qualname__} of {getattr(value, 'dtype', '?')}: "
                     "only arrays of numbers")


def _numpy_back(dtype: str, shape, text: str, fail):
    import numpy as np

    if not (isinstance(dtype, str) and len(dtype) <= 4 and dtype[1:2] in tuple(_NUMPY_KINDS)
            and dtype[:1] in "<>|=" and isinstance(shape, list) and all(type(n) is int and n >= 0 for n in shape)):
        fail("a malformed array")
    kind = np.dtype(dtype)
    data = base64.b64decode(text)
    count = 1
    for n in shape:
        count *= n
    if count * kind.itemsize != len(data):
        fail("an array whose bytes do not fit its shape")
    return np.frombuffer(data, dtype=kind).reshape(shape).copy()


def _arrow_back(kind: str, text: str):
    import pyarrow as pa

    table = pa.ipc.open_stream(base64.b64decode(text)).read_all()
    if kind == "pl":
        import polars as pl

        return pl.from_arrow(table)
    return table


# What a state may call, and what is checked before it is used ----------------------------------------------

def _term_cache_state(cache) -> dict:
    return {"terms": cache.terms}


def _term_cache_back(state, reader: _Reader):
    from ..core.rdfterms import TermCache
    from ..core.terms import Dictionary

    if not isinstance(state, dict) or not isinstance(state.get("terms"), Dictionary):
        reader.fail("a term cache without its dictionary")
    return TermCache(state["terms"])


def _query_state(query) -> dict:
    return {"text": query.text, "filename": query.filename, "base": query.base, "dialect": query.read_as}


def _query_back(state, reader: _Reader):
    from ..query.syntax import reparse

    if not (isinstance(state, dict) and set(state) == {"text", "filename", "base", "dialect"}
            and isinstance(state["text"], str) and isinstance(state["filename"], str)
            and isinstance(state["base"], (str, type(None))) and isinstance(state["dialect"], str)):
        reader.fail("a continuous query without its text")
    return reparse(state["text"], state["filename"], state["base"], state["dialect"])


def _origin_state(origin) -> dict:
    return {"kind": origin.kind, "text": origin.text, "filename": origin.filename, "terms": origin.terms,
            "semantics": origin.semantics}


def _origin_back(state, reader: _Reader):
    from ..core.terms import Dictionary
    from ..lars.program import DATALOGMTL_TEXT, LARS_TEXT, RULESET, Origin
    from ..lars.syntax import SEMANTICS

    if not (isinstance(state, dict) and set(state) == {"kind", "text", "filename", "terms", "semantics"}
            and state["kind"] in (LARS_TEXT, DATALOGMTL_TEXT, RULESET) and isinstance(state["text"], str)
            and isinstance(state["filename"], str) and isinstance(state["terms"], Dictionary)
            and state["semantics"] in SEMANTICS):
        reader.fail("a program's origin that is not its text, file name, dictionary and semantics")
    return Origin(state["kind"], state["text"], state["filename"], state["terms"], state["semantics"])


def _rule_state(rule) -> dict:
    if rule.origin is None:
        raise StateError(f"cannot store the rule {rule.text[:80]!r}: it was not parsed from a program's text, "
                         "and a state holds a rule only as that text")
    origin, number = rule.origin
    place = rule.location
    return {"origin": origin, "number": number, "text": rule.text,
            "place": None if place is None else [place.filename, place.line, place.column]}


def parse_again(origin) -> list:
    """The rules `origin`'s text gives, parsed as when they were first (a stored rule is made again so,
    never rebuilt from stored structure); `RuleSyntaxError` if the text no longer parses."""
    from ..lars.program import DATALOGMTL_TEXT, LARS_TEXT, RULESET

    if origin.kind == LARS_TEXT:
        from ..lars.syntax import parse_program

        return parse_program(origin.text, origin.filename, origin.terms, semantics=origin.semantics).rules
    if origin.kind == DATALOGMTL_TEXT:
        from ..mtl import load_program

        return load_program(origin.text, origin.filename, origin.terms).program.rules
    if origin.kind == RULESET:
        from ..reasoning.rulesets import rules_of

        return rules_of(origin.text, origin.terms)
    raise ValueError(f"unknown kind of program text {origin.kind!r}")


def _rule_back(state, reader: _Reader):
    """The rule parsed again from its origin's text (once per origin), checked to be the one stored."""
    from ..core.errors import LocatedError
    from ..lars.program import Origin

    if not (isinstance(state, dict) and set(state) == {"origin", "number", "text", "place"}
            and isinstance(state["origin"], Origin) and type(state["number"]) is int and isinstance(state["text"], str)
            and (state["place"] is None or isinstance(state["place"], list) and len(state["place"]) == 3)):
        reader.fail("a rule that is not its program's text, its number and place")
    origin = state["origin"]
    rules = reader.parsed.get(id(origin))
    if rules is None:
        try:
            rules = reader.parsed[id(origin)] = parse_again(origin)
        except (LocatedError, ValueError) as error:
            reader.fail(f"the program {origin.filename} no longer parses as it did ({error})")
    number = state["number"]
    rule = rules[number] if 0 <= number < len(rules) else None
    place = None if rule is None or rule.location is None else [rule.location.filename, rule.location.line,
                                                                 rule.location.column]
    if rule is None or rule.text != state["text"] or place != state["place"]:
        where = ":".join(str(part) for part in state["place"]) if state["place"] else origin.filename
        reader.fail(f"rule {number} of {origin.filename} ({where}) is not the one stored: the program parses to "
                    "other rules now")
    return rule


#: classes stored their own way: (state of, instance from (state, reader)). The rdflib term cache
#: is a cache: only its dictionary is stored, and it fills again. A continuous query is its text
#: (rdflib's algebra is made again by parsing it, as it was registered). A rule is its program's
#: text and its number in it: parsed again, never rebuilt from a stored structure.
_CUSTOM = {"rsp_plugin.core.rdfterms:TermCache": (_term_cache_state, _term_cache_back),
           "rsp_plugin.query.model:ContinuousQuery": (_query_state, _query_back),
           "rsp_plugin.lars.program:Origin": (_origin_state, _origin_back),
           "rsp_plugin.lars.program:Rule": (_rule_state, _rule_back)}


# The key --------------------------------------------------------------------------------------------------


def checkpoint_key(directory, given=None, *, create: bool) -> bytes | None:
    """The key the states of the checkpoint `directory` are authenticated with.

    `given` (a key file: `--checkpoint-key`), else the file $RSP_PLUGIN_CHECKPOINT_KEY names, else
    `directory/rsp-plugin.key`: made (32 random bytes, hex, mode 0600) when it is missing and
    `create` (a first write), else None. A key file must be private (`read_key`)."""
    named = given if given is not None else os.environ.get(KEY_ENV) or None
    if named is not None:
        return read_key(Path(named))
    path = Path(directory) / KEY_FILE
    if os.path.lexists(path):
        return read_key(path)
    return _new_key(path) if create else None


def read_key(path: Path) -> bytes:
    """The key in file `path` (surrounding white space aside): refused when group or others may read
    or write it, when it belongs to another user, or when it is shorter than 16 bytes."""
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise StateError(f"{path}: no such checkpoint key file") from None
    except OSError as error:
        raise StateError(f"{path}: the checkpoint key cannot be read ({error.strerror or error})") from None
    with os.fdopen(descriptor, "rb") as handle:
        status = os.fstat(handle.fileno())
        if not stat.S_ISREG(status.st_mode):
            raise StateError(f"{path}: the checkpoint key is not a regular file")
        if os.name == "posix":
            if status.st_uid != os.getuid():
                raise StateError(f"{path}: the checkpoint key belongs to another user (uid {status.st_uid}); "
                                 "use a key file of your own (--checkpoint-key FILE)")
            if status.st_mode & 0o077:
                raise StateError(f"{path}: the checkpoint key may be read or written by group or others "
                                 f"(mode {status.st_mode & 0o777:o}); make it private: chmod 600 {path}")
        key = handle.read(1 << 16).strip()
    if len(key) < MIN_KEY_BYTES:
        raise StateError(f"{path}: a checkpoint key of {len(key)} bytes; it needs at least {MIN_KEY_BYTES} "
                         f"(e.g. 32 random bytes in hex: python -c 'import secrets; print(secrets.token_hex(32))' > {path})")
    return key


def _new_key(path: Path) -> bytes:
    """32 random bytes as hex in a new file `path`, mode 0600 from the start (never a moment readable by others)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_hex(32).encode("ascii")
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(key + b"\n")
        handle.flush()
        os.fsync(handle.fileno())
    return key


__all__ = ["FORMAT", "KEY_ENV", "KEY_FILE", "VERSION", "StateError", "authenticated", "checkpoint_key", "dumps",
           "loads", "read_key"]
