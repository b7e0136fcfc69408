"""The episode: one isolated run of a world.

A generated world is a subclass of :class:`Episode` that declares its
tables, its state, its tools and its tasks. Everything mutable lives on the
episode object; two episodes never share mutable state.

Atomicity comes from an undo log: every change made by a tool (a row field,
a state item, an inserted or deleted row, a sequence step) is logged with
the value it replaced, and a failed call rolls the log back. Resetting to the
same initial data rolls back the whole log, so it costs what the episode
changed, not what the world holds. Hashing caches a digest per row, cleared
when the row changes.
"""

from __future__ import annotations

import datetime as dt
import gc
import json
import operator
import random
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import compress
from typing import Any, ClassVar, Generic, NoReturn, Self, TypeVar, dataclass_transform

from worldspec.runtime import budget
from worldspec.runtime.contract import (
    Field,
    FieldTable,
    StateItem,
    attribute_copier,
    attribute_filler,
    declared_fields,
    declared_items,
    field,
)
from worldspec.runtime.errors import (
    ArgumentError,
    InternalError,
    InvariantError,
    KeptError,
    ToolError,
)

# the value classes below are made by value_class, not dataclasses: importing dataclasses
# costs a world's import about 8 ms (see records.py)
from worldspec.runtime.records import listed_names, value_class
from worldspec.runtime.rewards import DEFAULT_REWARD, REWARD_MODES, combine_checks
from worldspec.runtime.values import (
    add,
    canonical_json,
    export_value,
    json_text,
    key_text,
    without,
    without_key,
)
from worldspec.runtime.values import quote as _quote
from worldspec.runtime.verdicts import Verdict, state_difference

__all__ = [
    "Row", "RowType", "Table", "Episode", "ToolSpec", "ParamSpec", "TaskSpec", "CheckSpec",
    "Snapshot", "StateBase", "StateType", "Score", "CheckOutcome", "FieldJson", "EpisodeRandom",
    "RUNTIME_FAILURES", "describe_failure",
]

K = Any
R = TypeVar("R", bound="Row")


#: How a generated row class describes one field for its JSON text: the attribute, the
#: field's name in JSON, the exporter (``None`` when the stored value is plain JSON already),
#: and whether the stored value is immutable all the way down, so that its text may be kept
#: for as long as the field holds that very object.
FieldJson = tuple[str, str, Callable[[Any], Any] | None, bool]

#: One step of a row's text: the JSON key with its separator, and the field's text maker.
_Step = tuple[str, Callable[[Any], str]]

_is_not = operator.is_not

#: A fragment cache entry never filled: its value is nothing a field can hold.
_NO_FRAGMENT: tuple[object, str] = (object(), "")


def _text_maker(export: Callable[[Any], Any] | None, encode: Callable[[Any], str]
                ) -> Callable[[Any], str]:
    """A field value's JSON text: ``encode`` of the value, exported first when it has an
    exporter."""
    if export is None:
        return encode
    return lambda value: encode(export(value))


# the templates of :meth:`_Layout.remaker`, by the number of fields whose fragments they
# make again: the positions ``I<i>``, the keys ``H<i>`` and the text makers ``M<i>`` are
# their globals, the attributes ``a<i>`` are renamed (see :func:`_setter`)
def _remake_one(row, frags):  # type: ignore[no-untyped-def]
    frags[I0] = H0 + M0(row.a0)  # type: ignore[name-defined]  # noqa: F821


def _remake_two(row, frags):  # type: ignore[no-untyped-def]
    frags[I0] = H0 + M0(row.a0)  # type: ignore[name-defined]  # noqa: F821
    frags[I1] = H1 + M1(row.a1)  # type: ignore[name-defined]  # noqa: F821


def _remake_three(row, frags):  # type: ignore[no-untyped-def]
    frags[I0] = H0 + M0(row.a0)  # type: ignore[name-defined]  # noqa: F821
    frags[I1] = H1 + M1(row.a1)  # type: ignore[name-defined]  # noqa: F821
    frags[I2] = H2 + M2(row.a2)  # type: ignore[name-defined]  # noqa: F821


def _remake_four(row, frags):  # type: ignore[no-untyped-def]
    frags[I0] = H0 + M0(row.a0)  # type: ignore[name-defined]  # noqa: F821
    frags[I1] = H1 + M1(row.a1)  # type: ignore[name-defined]  # noqa: F821
    frags[I2] = H2 + M2(row.a2)  # type: ignore[name-defined]  # noqa: F821
    frags[I3] = H3 + M3(row.a3)  # type: ignore[name-defined]  # noqa: F821


#: the remake templates, by the number of fields less one
_REMAKE = (_remake_one, _remake_two, _remake_three, _remake_four)

#: makes a row's stale fragments again, in a copy of its fragment list: ``(row, frags)``
Remaker = Callable[[Any, list[str]], None]


def _no_remake(row: Any, frags: list[str]) -> None:
    """The remaker of no field."""


class _Layout:
    """How one of a row class's two texts is assembled: the fields in the text's order,
    read all at once, with their keys, text makers and which of them may be cached."""

    __slots__ = ("attrs", "by_mask", "get", "indices", "steps", "volatile")

    def __init__(self, fields: Sequence[FieldJson], head: Callable[[str], str],
                 makers: Sequence[Callable[[Any], str]]) -> None:
        attrs = [attr for attr, _, _, _ in fields]
        self.attrs = tuple(attrs)
        if len(attrs) == 1:
            single = operator.attrgetter(attrs[0])
            self.get: Callable[[Any], tuple[Any, ...]] = lambda row: (single(row),)
        else:
            self.get = operator.attrgetter(*attrs)
        steps = [(head(name), make) for (_, name, _, _), make in zip(fields, makers, strict=True)]
        # the braces are part of the first and the last fragment: the text is one join
        steps[0] = ("{" + steps[0][0], steps[0][1])
        last = steps[-1][1]
        steps[-1] = (steps[-1][0], lambda value: last(value) + "}")
        self.steps: tuple[_Step, ...] = tuple(steps)
        #: fields whose type holds ``json``: serialised every time
        self.volatile = tuple(i for i, (_, _, _, keep) in enumerate(fields) if not keep)
        self.indices = range(len(attrs))
        #: per mask of stale bits met so far, the function making again the fragments of
        #: those fields and of the json ones (:meth:`remaker`)
        self.by_mask: dict[int, Remaker] = {}

    def remaker(self, stale: int) -> Remaker:
        """What :meth:`Row._result_text` calls to make the fragments of the stale bits
        ``stale`` again (and those of the json fields), made once per mask: the statements
        ``frags[i] = key + text(row.field)`` written out, a template of :data:`_REMAKE` per
        four fields with its attributes renamed (as :func:`_setter` makes setters)."""
        found = self.by_mask.get(stale)
        if found is None:
            if len(self.by_mask) >= 4096:  # each write pattern is one mask: few in practice
                self.by_mask.clear()
            marked = sorted({i for i in self.indices if stale >> i & 1} | set(self.volatile))
            parts: list[Remaker] = []
            for start in range(0, len(marked), len(_REMAKE)):
                chunk = marked[start:start + len(_REMAKE)]
                template = _REMAKE[len(chunk) - 1].__code__
                renamed = {f"a{k}": self.attrs[i] for k, i in enumerate(chunk)}
                scope: dict[str, Any] = {}
                for k, i in enumerate(chunk):
                    scope[f"I{k}"] = i
                    scope[f"H{k}"], scope[f"M{k}"] = self.steps[i]
                code = template.replace(
                    co_names=tuple(renamed.get(n, n) for n in template.co_names),
                    co_name=f"remake_{'_'.join(renamed.values())}")
                parts.append(types.FunctionType(code, scope, code.co_name))
            found = _chained(parts)
            self.by_mask[stale] = found
        return found

    def fragments(self, values: tuple[Any, ...]) -> list[str]:
        """Every field's key and JSON text, made from the row's values (``get`` of it)."""
        return [head + make(value) for value, (head, make) in zip(values, self.steps,
                                                                 strict=True)]


def _chained(parts: list[Remaker]) -> Remaker:
    """One remaker calling ``parts`` in order."""
    if not parts:
        return _no_remake
    if len(parts) == 1:
        return parts[0]
    chunks = tuple(parts)

    def remake(row: Any, frags: list[str]) -> None:
        for part in chunks:
            part(row, frags)
    return remake


class RowType(type):
    """The metaclass of generated entity classes: turns a row class's :class:`~worldspec.
    runtime.contract.Field` declarations into its slots and ``JSON_FIELDS`` before the class
    is made (so :meth:`Row.__init_subclass__` lays out its texts), then builds its methods
    once (:func:`_build_row`)."""

    def __new__(mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any],
                **kwargs: Any) -> RowType:
        fields = declared_fields(namespace)
        if fields:
            for f in fields:
                del namespace[f.name]
            namespace["__slots__"] = tuple(f.name for f in fields)
            if not any(f.omit_none for f in fields):  # else the export's text, made anew
                namespace["JSON_FIELDS"] = tuple((f.name, f.json, f.export, f.keeps_text)
                                                 for f in fields)
                if any(f.text is not None for f in fields):
                    namespace["_JSON_TEXT"] = tuple(f.text for f in fields)
            namespace.setdefault("ENTITY", name)
            namespace["KEY"] = next((f.name for f in fields if f.key), "")
        cls = super().__new__(mcls, name, bases, namespace, **kwargs)
        if fields:
            _build_row(cls, fields)
        return cls


@dataclass_transform(kw_only_default=True, field_specifiers=(field,))
class Row(metaclass=RowType):
    """Base of generated entity classes: slotted, mutable, with a cached digest and text.

    A generated class declares its fields (:func:`~worldspec.runtime.contract.field`), from
    which :class:`RowType` makes its slots, its ``JSON_FIELDS`` and its ``__init__``,
    ``clone``, ``export`` and ``load``. The row's JSON text (tau2's result
    form) is cached whole (``_text``) and as one fragment per field (``_frags``): every
    change of a field goes through the episode (:meth:`Episode.set_field`), which marks
    that field's fragment stale (a bit of ``_stale``) and keeps the text, the fragment list
    and the stale bits the row had before in the undo entry, so an undo or a reset brings
    them back as they were (:meth:`_put_back`). A
    fragment list is never changed in place: making the text after a change copies it and
    serialises the changed fields only, so undo entries and clones may hold it, and a row
    whose changes were all undone has its text at once. Fields whose type holds ``json``
    anywhere are serialised every time the text is made.

    The canonical text (for the digest) is assembled from fragments too, cached with the
    field values they were made from and reused while a field still holds that very object
    (stored values other than ``json`` are immutable: tuples, frozen records, maps never
    changed in place, scalars); the fragment a field had before is kept as well, since an
    undo or a reset brings that value back. A clone keeps the text, the digest and the
    fragment list (its values are the same objects) but not the canonical cache, so that
    copies stay cheap.
    """

    __slots__ = ("_cparts", "_digest", "_frags", "_stale", "_text")
    #: the fields' declarations, as the runtime uses them
    FIELD_TABLE: ClassVar[FieldTable]
    ENTITY: ClassVar[str] = ""
    KEY: ClassVar[str] = ""
    JSON_FIELDS: ClassVar[tuple[FieldJson, ...]] = ()
    #: per field of ``JSON_FIELDS``, a function giving the JSON text of a stored value
    #: (``json.dumps`` of its export), or None for ``json_text`` of the exported value;
    #: generated for fields holding records, whose texts are cached on the records
    _JSON_TEXT: ClassVar[tuple[Callable[[Any], str] | None, ...]] = ()
    #: the fields in ``export()`` order, keyed as ``json.dumps`` writes them
    _TEXT: ClassVar[_Layout | None] = None
    #: the fields in sorted key order, keyed as ``canonical_json`` writes them
    _CANONICAL: ClassVar[_Layout | None] = None
    #: per attribute: its position in ``JSON_FIELDS`` and the bit of ``_stale`` for it
    _AT: ClassVar[dict[str, tuple[int, int]]] = {}
    #: per tuple of field names set together (:meth:`Episode.set_fields`), the function
    #: setting them, made when first called
    _GROUP_SETTERS: ClassVar[dict[tuple[str, ...], Setter]] = {}
    _digest: bytes | None
    #: the JSON text, or None when a field changed since it was made
    _text: str | None
    #: the JSON text's fragments (key and value of each field, in ``JSON_FIELDS`` order),
    #: or None before the text is first made
    _frags: list[str] | None
    #: with ``_frags``: one bit per field whose fragment is stale (its value changed)
    _stale: int
    #: the canonical text's cache: the field values its fragments were made from, the
    #: fragments, and per field the (value, fragment) it had before
    _cparts: list[Any] | None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields = cls.JSON_FIELDS
        if not fields:
            cls._TEXT = cls._CANONICAL = None
            cls._AT = {}
            return
        texts = cls._JSON_TEXT or (None,) * len(fields)
        cls._TEXT = _Layout(fields, lambda name: json_text(name) + ": ",
                            [text or _text_maker(f[2], json_text)
                             for f, text in zip(fields, texts, strict=True)])
        ordered = sorted(fields, key=lambda f: f[1])
        cls._CANONICAL = _Layout(ordered, lambda name: canonical_json(name) + ":",
                                 [_text_maker(f[2], canonical_json) for f in ordered])
        cls._AT = {attr: (i, 1 << i) for i, (attr, _, _, _) in enumerate(fields)}

    def key(self) -> Any:
        return getattr(self, self.KEY)

    def export(self) -> dict[str, Any]:
        """The row as plain JSON data."""
        return self.FIELD_TABLE.export(self)

    def clone(self) -> Self:
        """A copy of the row, with its digest, text and fragments (built per class)."""
        raise NotImplementedError

    @classmethod
    def load(cls, data: object, path: str, ep: Any) -> Self:
        """The row from plain JSON data, checked (``ep``: the episode, for defaults)."""
        raise NotImplementedError

    def _result_text(self) -> str:
        """The row as JSON text (tau2's result form), cached until the row changes.

        Equal to ``json.dumps(self.export())``; only the fields that changed since the
        fragments were made are serialised again.
        """
        text = self._text
        if text is not None:
            return text
        layout = self._TEXT
        if layout is None:
            text = json_text(self.export())
        else:
            frags = self._frags
            if frags is None:
                self._frags = frags = layout.fragments(layout.get(self))
                self._stale = 0
            else:
                stale = self._stale
                if stale or layout.volatile:
                    # a new list, never this one changed: undo entries and clones may hold it
                    frags = frags.copy()
                    # the fields changed, and json ones
                    (layout.by_mask.get(stale) or layout.remaker(stale))(self, frags)
                    self._frags = frags
                    self._stale = 0
            text = ", ".join(frags)
        self._text = text
        return text

    def _stale_field(self, name: str) -> None:
        """Field ``name`` changed (or got an old value back): its fragment is stale."""
        if self._frags is not None:
            found = self._AT.get(name)
            if found is None:  # not a field of the text: it cannot be told apart
                self._frags = None
            else:
                self._stale |= found[1]

    def _put_back(self, names: tuple[str, ...], digest: bytes | None, text: str | None,
                  frags: list[str] | None, stale: int) -> None:
        """Fields ``names`` got back the values they had before a change whose undo entry
        kept the row's digest, text, fragments and stale bits of then (fragment lists are
        never changed in place, so they still hold)."""
        self._digest = digest
        self._text = text
        if frags is not None:
            self._frags = frags
            self._stale = stale
        else:  # the fragments were made after the change: they hold, but for these fields
            for name in names:
                self._stale_field(name)

    def digest(self) -> bytes:
        """SHA-256 of the row's canonical JSON, cached until the row changes.

        A row whose text has been made before (it has fragments) assembles its canonical
        text from cached field fragments too; others serialise in one go, which is faster
        when every field is new (a fresh load).
        """
        cached = self._digest
        if cached is None:
            import hashlib  # here, not at the top: OpenSSL's costs a world's import ~4 ms

            layout = self._CANONICAL
            if layout is not None and (self._cparts is not None or self._frags is not None):
                text = ",".join(self._fragments(layout))
            else:
                text = canonical_json(self.export())
            cached = hashlib.sha256(text.encode()).digest()
            self._digest = cached
        return cached

    def _fragments(self, layout: _Layout) -> list[str]:
        """Each field's key and canonical JSON text, reusing a cached fragment when the
        field still holds the value it was made from."""
        parts = self._cparts
        values = layout.get(self)
        if parts is None:
            made = layout.fragments(values)
            self._cparts = [values, made, [_NO_FRAGMENT] * len(made)]
            return made
        old: tuple[Any, ...] = parts[0]
        frags: list[str] = parts[1]
        before: list[tuple[object, str]] = parts[2]
        steps = layout.steps
        for i in compress(layout.indices, map(_is_not, values, old)):
            value = values[i]
            previous = before[i]
            before[i] = (old[i], frags[i])
            if previous[0] is value:  # back to the value before (an undo, a reset)
                frags[i] = previous[1]
            else:
                head, make = steps[i]
                frags[i] = head + make(value)
        for i in layout.volatile:  # json: may hold anything, so made every time
            head, make = steps[i]
            frags[i] = head + make(values[i])
            before[i] = _NO_FRAGMENT
        parts[0] = values
        return frags


def _build_row(cls: Any, fields: tuple[Field, ...]) -> None:
    """Give row class ``cls`` its ``__init__`` (keyword arguments, one per field),
    ``clone`` and ``load``, closures over its ``fields``."""
    table = FieldTable(fields)
    cls.FIELD_TABLE = table
    names = table.names
    known = frozenset(names)
    title = cls.__qualname__
    new = object.__new__
    fill = attribute_filler(names)
    #: the arguments' values in field order, as a tuple
    ordered = operator.itemgetter(*names) if len(names) > 1 else \
        (lambda values: (values[names[0]],))
    #: copies the fields, then the caches a clone keeps
    copy_kept = attribute_copier((*names, "_digest", "_text", "_frags", "_stale"))

    def __init__(self: Any, **values: Any) -> None:
        if values.keys() != known:
            _unbound(title, names, values)
        fill(self, ordered(values))
        self._digest = self._text = self._frags = self._cparts = None
        self._stale = 0

    def clone(self: Any) -> Any:
        # the same values: the same digest, text and text fragments (a fragment list is
        # never changed in place, so the two rows may share it); the canonical text's
        # cache is not copied, so copies and resets stay cheap
        other = new(cls)
        copy_kept(self, other)
        other._cparts = None
        return other

    load_values = table.load

    def load(klass: Any, data: object, path: str, ep: Any) -> Any:
        row = new(cls)
        fill(row, load_values(data, path, ep))
        row._digest = row._text = row._frags = row._cparts = None
        row._stale = 0
        return row

    for attribute, method in (("__init__", __init__), ("clone", clone), ("load", load)):
        method.__qualname__ = f"{title}.{attribute}"
        setattr(cls, attribute, classmethod(method) if attribute == "load" else method)
    cls._GROUP_SETTERS = {}


def _unbound(title: str, names: tuple[str, ...], values: Mapping[str, Any]) -> None:
    """Raise what a generated row's ``__init__`` raised for keyword arguments that are not
    its fields, one each."""
    for name in values:
        if name not in names:
            raise TypeError(f"{title}.__init__() got an unexpected keyword argument {name!r}")
    missing = [repr(name) for name in names if name not in values]
    listed = listed_names(missing)
    raise TypeError(f"{title}.__init__() missing {len(missing)} required keyword-only "
                    f"argument{'s' if len(missing) > 1 else ''}: {listed}")


class EpisodeRandom(random.Random):
    """The episode's generator: ``random.Random`` (the same draws) that counts the 32-bit
    words it draws, so that a failed call can put it back without a copy of its state.

    Saving a Mersenne Twister's state (``getstate()``) builds 625 ints, and freeing them
    costs as much again: more than the rest of a small tool call. Instead, a call that draws
    notes how many words had been drawn (:meth:`mark`), and a rollback (:meth:`rewind`) goes
    back to the last base state (the seed, or a state set by ``setstate``) and draws that
    many words again, in one ``getrandbits`` per 65,536 words. Every draw is built on
    ``random()`` (two words) and ``getrandbits(k)`` (``ceil(k / 32)`` words), which are the
    only two methods counted; ``gauss``'s cached second value is part of the mark.
    """

    #: words drawn since the base state
    _words: int
    #: the base state: an int seed or a state from ``getstate()``
    _base: int | tuple[Any, ...]
    #: a rewind this many words past the base makes the current state the new base
    REBASE = 1 << 16

    def seed(self, a: Any = None, version: int = 2) -> None:
        super().seed(a, version)
        self._words = 0
        self._base = a if type(a) is int else super().getstate()

    def setstate(self, state: tuple[Any, ...]) -> None:
        super().setstate(state)
        self._words = 0
        self._base = state

    def random(self) -> float:
        self._words += 2
        return super().random()

    def getrandbits(self, k: int) -> int:
        self._words += (k + 31) // 32
        return super().getrandbits(k)

    def mark(self) -> tuple[int, Any]:
        """Where the generator is now, for :meth:`rewind`."""
        return (self._words, self.gauss_next)

    def rewind(self, mark: tuple[int, Any]) -> None:
        """Back to the state of ``mark`` (taken since the last ``seed``/``setstate``)."""
        words, gauss_next = mark
        if words == self._words:
            self.gauss_next = gauss_next
            return
        base = self._base
        if type(base) is int:
            random.Random.seed(self, base)
        else:
            random.Random.setstate(self, base)  # type: ignore[arg-type]
        left = words
        while left > 0:
            chunk = min(left, 1 << 16)
            random.Random.getrandbits(self, 32 * chunk)
            left -= chunk
        self.gauss_next = gauss_next
        self._words = words
        if words >= self.REBASE:
            self._base = random.Random.getstate(self)
            self._words = 0


class StateType(type):
    """The metaclass of a world's ``_State``: turns its :func:`~worldspec.runtime.contract.
    state_item` declarations into slots and builds ``__init__`` (every item at its zero),
    ``export`` and ``clone`` once."""

    def __new__(mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any],
                **kwargs: Any) -> StateType:
        if not any(isinstance(base, StateType) for base in bases):
            return super().__new__(mcls, name, bases, namespace, **kwargs)
        items = declared_items(namespace)
        for item in items:
            del namespace[item.name]
        namespace["__slots__"] = tuple(item.name for item in items)
        namespace["FIELDS"] = tuple(item.json for item in items)
        cls = super().__new__(mcls, name, bases, namespace, **kwargs)
        _build_state(cls, items)
        return cls


class StateBase(metaclass=StateType):
    """Base of the generated class that holds a world's non-table state."""

    __slots__ = ()
    #: the items' names (in JSON), in declaration order
    FIELDS: ClassVar[tuple[str, ...]] = ()

    def export(self) -> dict[str, Any]:
        raise NotImplementedError

    def clone(self) -> Self:
        raise NotImplementedError

    def load(self, data: Mapping[str, Any], ep: Any, *names: str) -> None:
        """Set the items named (attributes; all of them, in declaration order, where none is
        named) that ``data`` gives, each checked by its declared loader."""
        raise NotImplementedError


def _build_state(cls: Any, items: tuple[StateItem, ...]) -> None:
    """Give state class ``cls`` its methods, closures over its ``items``."""
    names = tuple(item.name for item in items)
    zeros = tuple(item.zero for item in items)
    # a map zero is copied per state (maps are never changed in place, but no state shares)
    maps = tuple(i for i, zero in enumerate(zeros) if type(zero) is dict)
    fill = attribute_filler(names)
    copy_items = attribute_copier(names)
    table = [(item.json, item.export) for item in items]
    get = operator.attrgetter(*names) if len(names) > 1 else (
        (lambda obj: (getattr(obj, names[0]),)) if names else (lambda obj: ()))
    new = object.__new__

    def __init__(self: Any) -> None:
        if maps:
            values = list(zeros)
            for i in maps:
                values[i] = dict(values[i])
            fill(self, tuple(values))
        else:
            fill(self, zeros)

    def export(self: Any) -> dict[str, Any]:
        return {name: value if export is None else export(value)
                for (name, export), value in zip(table, get(self), strict=True)}

    def clone(self: Any) -> Any:
        other = new(type(self))
        copy_items(self, other)
        return other

    by_name = {item.name: item for item in items}

    def load(self: Any, data: Mapping[str, Any], ep: Any, *named: str) -> None:
        for item in [by_name[name] for name in named] if named else items:
            given, value = item.loaded(data, ep)
            if given:
                setattr(self, item.name, value)

    for attribute, method in (("__init__", __init__), ("export", export), ("clone", clone),
                              ("load", load)):
        method.__qualname__ = f"{cls.__qualname__}.{attribute}"
        setattr(cls, attribute, method)


#: a row's cached digest (``None`` when it has none yet)
_CACHED_DIGEST = operator.attrgetter("_digest")


class Table(Generic[R]):
    """The rows of one entity, keyed and in insertion order."""

    __slots__ = ("_digest", "entity", "name", "rows")

    def __init__(self, name: str, entity: str, rows: dict[Any, R] | None = None) -> None:
        self.name = name
        self.entity = entity
        self.rows: dict[Any, R] = rows if rows is not None else {}
        #: digest of the row digests in order; cleared by every change to the table's rows
        self._digest: bytes | None = None

    def digest(self) -> bytes:
        """SHA-256 of the row digests in row order, cached until a row changes.

        The cached row digests are read in one pass (``attrgetter`` over the rows, no Python
        call per row); only the rows that have none are asked for their own.
        """
        if self._digest is None:
            rows = self.rows.values()
            try:
                parts: list[bytes | None] = list(map(_CACHED_DIGEST, rows))
            except AttributeError:  # a row made without its slots set
                parts = [r.digest() for r in rows]
            if None in parts:  # only the rows changed since their last digest are asked
                parts = [part if part is not None else row.digest()
                         for part, row in zip(parts, rows, strict=True)]
            import hashlib

            self._digest = hashlib.sha256(b"".join(parts)).digest()  # type: ignore[arg-type]
        return self._digest

    def load_rows(self, row_class: type[R], data: object, path: str, ep: Any) -> None:
        """Load the rows ``data`` gives (a list, or an object keyed by row key) as rows of
        ``row_class``, each checked at ``path[index]`` (``ep``: the episode, for defaults)."""
        from worldspec.runtime.helpers import rows_of  # helpers imports this module

        rows = self.rows
        load = row_class.load
        for index, item in enumerate(rows_of(data)):
            row = load(item, f"{path}[{index}]", ep)
            rows[row.key()] = row

    def copy(self) -> Table[R]:
        """An independent table with cloned rows; row and table digests carry over."""
        other = Table(self.name, self.entity, {k: r.clone() for k, r in self.rows.items()})
        other._digest = self._digest
        return other

    def row(self, key: Any) -> R:
        """The row with ``key``; the tool call fails if there is none."""
        found = self.rows.get(key)
        if found is None:
            raise ToolError(f"{self.entity} {_quote(key)} not found.")
        return found

    def __getitem__(self, key: Any) -> R:
        """``table[key]``, as generated code reads a row by its key: :meth:`row` (the tool
        call fails if there is none), with one dict lookup when there is one."""
        try:
            return self.rows[key]
        except KeyError:
            pass
        return self.row(key)

    def get(self, key: Any) -> R | None:
        return self.rows.get(key)

    def ref(self, key: Any) -> R | None:
        """The row of an optional reference (``None`` stays ``None``)."""
        return None if key is None else self.row(key)

    def keys(self) -> tuple[Any, ...]:
        return tuple(self.rows)

    def __contains__(self, key: object) -> bool:
        return key in self.rows

    def __iter__(self) -> Iterator[R]:
        return iter(tuple(self.rows.values()))

    def __len__(self) -> int:
        return len(self.rows)


@value_class(frozen=True)
class ParamSpec:
    """A tool parameter as the agent sees it."""

    name: str
    schema: dict[str, Any]
    required: bool
    doc: str
    #: for an entity parameter, the table its key is looked up in
    table: str | None = None


@value_class(frozen=True)
class ToolSpec:
    """A tool: its description, JSON schema and the bound method that runs it."""

    name: str
    doc: str
    params: tuple[ParamSpec, ...]
    read_only: bool
    invoke: Callable[[Any, Mapping[str, Any]], Any]
    #: the spec location of the tool (``file.world:line``)
    where: str = ""
    #: the JSON schema of a successful result (as exported), or None when it returns nothing
    returns: dict[str, Any] | None = None
    #: whether a call must check the invariants afterwards: by default when it may change
    #: state; False where the compiler proved that no call can break one (the tool changes
    #: no field holding keys, inserts and deletes nothing, and the world declares none)
    checks: bool | None = None
    #: where the result shows whole rows (``row[E]``): a shape for ``Episode.shown``, or
    #: None when it shows none (its entities inside are keys, as stored)
    shows: tuple[Any, ...] | None = None

    def __post_init__(self) -> None:
        if self.checks is None:
            object.__setattr__(self, "checks", not self.read_only)


@value_class(frozen=True)
class CheckSpec:
    """A named check item of a task."""

    name: str
    weight: float
    doc: str
    #: ``test(episode, initial, replies)``: the final and the initial episode, and the
    #: agent's messages to the user (what ``reply`` and ``replies`` read); a
    #: :class:`~worldspec.runtime.verdicts.Verdict` where the check can say what it compared
    test: Callable[[Any, Any, tuple[str, ...]], bool | Verdict]


@value_class(frozen=True)
class TaskSpec:
    """A task: initial data, instruction, checks, frame and reference solution."""

    name: str
    instruction: str
    data: Mapping[str, Any]
    checks: tuple[CheckSpec, ...]
    frame: tuple[str, ...] | None
    solution: tuple[tuple[str, Mapping[str, Any]], ...]
    seed: int | None = None
    persona: str | None = None
    known: str | None = None
    unknown: str | None = None
    tags: tuple[str, ...] = ()
    split: str | None = None
    doc: str | None = None
    #: the reference solution's replies: what the agent should tell the user
    replies: tuple[str, ...] = ()
    #: how the checks combine (``reward MODE`` in the task); None: the world's ``REWARD``
    reward: str | None = None


@value_class(frozen=True)
class CheckOutcome:
    """How one check item came out."""

    name: str
    passed: bool
    weight: float
    message: str = ""
    #: for a failed check, what it compared where the check can tell (JSON data; see
    #: :mod:`worldspec.runtime.verdicts`): both sides of a comparison, or the first path
    #: where the state differs from the expected one; ``None`` otherwise
    detail: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out = {"name": self.name, "passed": self.passed, "status": self.status,
               "weight": self.weight, "message": self.message}
        if self.detail is not None:
            out["detail"] = dict(self.detail)
        return out

    @property
    def status(self) -> str:
        """``passed``, ``failed``, or ``error`` (the check raised; ``message`` says why)."""
        if self.passed:
            return "passed"
        return "error" if self.message.startswith("error:") else "failed"


@value_class(frozen=True)
class Score:
    """A task's reward with the breakdown per check and the frame verdict."""

    reward: float
    checks: tuple[CheckOutcome, ...]
    frame_ok: bool
    frame_violations: tuple[str, ...]
    #: the checks' weighted share alone, before a broken frame zeroes ``reward``
    #: (``None`` on a score built by hand: then it is ``reward``)
    checks_reward: float | None = None
    #: the first changes that broke the frame, with both values (``Episode.diff`` entries:
    #: ``path``, ``old``, ``new``), at most :data:`FRAME_CHANGES_SHOWN` of them
    frame_changes: tuple[Mapping[str, Any], ...] = ()

    @property
    def passed(self) -> bool:
        """Whether the task is done: every check holds (and there is one) and the frame holds.

        It does not depend on how the checks combine: under ``reward all`` the reward is 1
        exactly when the score passed.
        """
        return bool(self.checks) and all(c.passed for c in self.checks) and self.frame_ok

    def to_json(self) -> dict[str, Any]:
        return {
            "reward": self.reward,
            "passed": self.passed,
            "checks_reward": self.reward if self.checks_reward is None else self.checks_reward,
            "checks": [c.to_json() for c in self.checks],
            "frame": {"ok": self.frame_ok, "violations": list(self.frame_violations),
                      **({"changes": [_json_change(c) for c in self.frame_changes]}
                         if self.frame_changes else {})},
        }


#: How many of a broken frame's changes a score keeps with their values.
FRAME_CHANGES_SHOWN = 10


def _json_change(change: Mapping[str, Any]) -> dict[str, Any]:
    return {"path": change["path"], "old": change.get("old"), "new": change.get("new")}


@value_class(frozen=True)
class Snapshot:
    """A saved state of an episode (an independent copy)."""

    tables: dict[str, dict[Any, Row]]
    state: StateBase
    clock: dt.datetime
    rng: tuple[Any, ...]
    #: the task, and the episode as it was after its last reset (what ``initial`` means
    #: in checks), so that a restored episode scores as the original would
    task: TaskSpec | None = None
    origin: Episode | None = None
    #: the episode class it was taken from: only an episode of that class can restore it
    owner: type[Episode] | None = None


# An undo entry is a callable-free tuple for speed, written and read by Episode's write API
# alone (and the change tracking of worldspec.runtime.helpers):
#   (0, state, attribute, old value, None)       -- a state item was set (five items)
#   (0, row, attribute, old value, digest, text, fragments, stale bits)
#                                                -- a row's field was set (Row._put_back;
#                                                   eight items: _rollback tells them so)
#   (1, table, key)                              -- a row was inserted
#   (2, table, key, row, position)               -- a row was deleted
_SET, _INSERT, _DELETE = 0, 1, 2


@value_class
class _Base:
    """Which initial data the episode was loaded from (resets to it roll back)."""

    source: Mapping[str, Any]


#: (world class, id of a task's data) -> (the data, an episode holding its loaded state)
_TEMPLATES: dict[tuple[type, int], tuple[Mapping[str, Any], Episode]] = {}
_TEMPLATES_MAX = 64

#: (world class, task, starting state hash, RNG state, clock) -> hash of the state the task's
#: solution leaves (a solution that draws or reads the clock leaves another state otherwise)
_SOLUTION_HASHES: dict[tuple[type, str, str, tuple[Any, ...], dt.datetime], str] = {}
_SOLUTION_HASHES_MAX = 4096


# ------------------------------------------------------------------ field setters
# The templates of the functions that set a row's fields (Episode.set_field, set_fields),
# by the number of fields they set: each keeps the row's caches of before in the undo entry
# of every field (Row._put_back), marks the fields' fragments stale (the bits ``MASK``) and
# clears the digests of the row and of its entity's tables. Their attributes ``a<i>`` are
# renamed to the fields and ``N<i>`` (the fields' names, for the undo entries) and ``MASK``
# are their globals (see :func:`_setter`).
def _set_one(ep, row, v0):  # type: ignore[no-untyped-def]
    digest, text, frags, stale = row._digest, row._text, row._frags, row._stale
    ep._undo.append((0, row, N0, row.a0, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a0 = v0
    if frags is not None:
        row._stale = stale | MASK  # type: ignore[name-defined]  # noqa: F821
    row._digest = row._text = None
    for table in ep._tables_of.get(row.ENTITY, ()):
        table._digest = None


def _set_two(ep, row, v0, v1):  # type: ignore[no-untyped-def]
    digest, text, frags, stale = row._digest, row._text, row._frags, row._stale
    log = ep._undo.append
    log((0, row, N0, row.a0, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a0 = v0
    log((0, row, N1, row.a1, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a1 = v1
    if frags is not None:
        row._stale = stale | MASK  # type: ignore[name-defined]  # noqa: F821
    row._digest = row._text = None
    for table in ep._tables_of.get(row.ENTITY, ()):
        table._digest = None


def _set_three(ep, row, v0, v1, v2):  # type: ignore[no-untyped-def]
    digest, text, frags, stale = row._digest, row._text, row._frags, row._stale
    log = ep._undo.append
    log((0, row, N0, row.a0, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a0 = v0
    log((0, row, N1, row.a1, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a1 = v1
    log((0, row, N2, row.a2, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a2 = v2
    if frags is not None:
        row._stale = stale | MASK  # type: ignore[name-defined]  # noqa: F821
    row._digest = row._text = None
    for table in ep._tables_of.get(row.ENTITY, ()):
        table._digest = None


def _set_four(ep, row, v0, v1, v2, v3):  # type: ignore[no-untyped-def]
    digest, text, frags, stale = row._digest, row._text, row._frags, row._stale
    log = ep._undo.append
    log((0, row, N0, row.a0, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a0 = v0
    log((0, row, N1, row.a1, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a1 = v1
    log((0, row, N2, row.a2, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a2 = v2
    log((0, row, N3, row.a3, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a3 = v3
    if frags is not None:
        row._stale = stale | MASK  # type: ignore[name-defined]  # noqa: F821
    row._digest = row._text = None
    for table in ep._tables_of.get(row.ENTITY, ()):
        table._digest = None


def _set_five(ep, row, v0, v1, v2, v3, v4):  # type: ignore[no-untyped-def]
    digest, text, frags, stale = row._digest, row._text, row._frags, row._stale
    log = ep._undo.append
    log((0, row, N0, row.a0, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a0 = v0
    log((0, row, N1, row.a1, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a1 = v1
    log((0, row, N2, row.a2, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a2 = v2
    log((0, row, N3, row.a3, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a3 = v3
    log((0, row, N4, row.a4, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a4 = v4
    if frags is not None:
        row._stale = stale | MASK  # type: ignore[name-defined]  # noqa: F821
    row._digest = row._text = None
    for table in ep._tables_of.get(row.ENTITY, ()):
        table._digest = None


def _set_six(ep, row, v0, v1, v2, v3, v4, v5):  # type: ignore[no-untyped-def]
    digest, text, frags, stale = row._digest, row._text, row._frags, row._stale
    log = ep._undo.append
    log((0, row, N0, row.a0, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a0 = v0
    log((0, row, N1, row.a1, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a1 = v1
    log((0, row, N2, row.a2, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a2 = v2
    log((0, row, N3, row.a3, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a3 = v3
    log((0, row, N4, row.a4, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a4 = v4
    log((0, row, N5, row.a5, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a5 = v5
    if frags is not None:
        row._stale = stale | MASK  # type: ignore[name-defined]  # noqa: F821
    row._digest = row._text = None
    for table in ep._tables_of.get(row.ENTITY, ()):
        table._digest = None


def _set_seven(ep, row, v0, v1, v2, v3, v4, v5, v6):  # type: ignore[no-untyped-def]
    digest, text, frags, stale = row._digest, row._text, row._frags, row._stale
    log = ep._undo.append
    log((0, row, N0, row.a0, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a0 = v0
    log((0, row, N1, row.a1, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a1 = v1
    log((0, row, N2, row.a2, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a2 = v2
    log((0, row, N3, row.a3, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a3 = v3
    log((0, row, N4, row.a4, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a4 = v4
    log((0, row, N5, row.a5, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a5 = v5
    log((0, row, N6, row.a6, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a6 = v6
    if frags is not None:
        row._stale = stale | MASK  # type: ignore[name-defined]  # noqa: F821
    row._digest = row._text = None
    for table in ep._tables_of.get(row.ENTITY, ()):
        table._digest = None


def _set_eight(ep, row, v0, v1, v2, v3, v4, v5, v6, v7):  # type: ignore[no-untyped-def]
    digest, text, frags, stale = row._digest, row._text, row._frags, row._stale
    log = ep._undo.append
    log((0, row, N0, row.a0, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a0 = v0
    log((0, row, N1, row.a1, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a1 = v1
    log((0, row, N2, row.a2, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a2 = v2
    log((0, row, N3, row.a3, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a3 = v3
    log((0, row, N4, row.a4, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a4 = v4
    log((0, row, N5, row.a5, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a5 = v5
    log((0, row, N6, row.a6, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a6 = v6
    log((0, row, N7, row.a7, digest, text, frags, stale))  # type: ignore[name-defined]  # noqa: F821
    row.a7 = v7
    if frags is not None:
        row._stale = stale | MASK  # type: ignore[name-defined]  # noqa: F821
    row._digest = row._text = None
    for table in ep._tables_of.get(row.ENTITY, ()):
        table._digest = None


#: the setter templates, by the number of fields they set less one
_SET_TEMPLATES = (_set_one, _set_two, _set_three, _set_four, _set_five, _set_six, _set_seven,
                  _set_eight)

#: a row's setter: ``(episode, row, *values)``
Setter = Callable[..., None]


def _setter(cls: type[Row], names: tuple[str, ...]) -> Setter | None:
    """A function ``(episode, row, *values)`` setting the fields ``names`` of a row of
    ``cls`` as :meth:`Episode.set_fields` says, made once per class and names; ``None``
    when a name is no field of the class, or names repeat.

    Setting an attribute by a name known at run time (``setattr``), reading one
    (``getattr``) and looking up its stale bit cost more than the rest of a write, which is
    the hot path of every tool that changes a row. So the setters are made of templates of
    the statements written out (:data:`_SET_TEMPLATES`, up to eight fields; more go eight by
    eight), their attributes renamed in their code objects (``CodeType.replace``, as
    :func:`~worldspec.runtime.contract.attribute_copier` does: no source is compiled)."""
    fields = cls.__dict__.get("FIELD_TABLE")
    if fields is None or len(set(names)) != len(names) or \
            not set(names) <= set(fields.names):
        return None
    bits = cls._AT
    parts = []
    for start in range(0, len(names), len(_SET_TEMPLATES)):
        chunk = names[start:start + len(_SET_TEMPLATES)]
        template = _SET_TEMPLATES[len(chunk) - 1].__code__
        renamed = {f"a{i}": name for i, name in enumerate(chunk)}
        code = template.replace(co_names=tuple(renamed.get(n, n) for n in template.co_names),
                                co_name=f"set_{'_'.join(chunk)}",
                                co_qualname=f"{cls.__qualname__}.set_{'_'.join(chunk)}")
        scope: dict[str, Any] = {f"N{i}": name for i, name in enumerate(chunk)}
        # a class whose text is the export's has no fragments: no bit to mark
        scope["MASK"] = sum(bits[name][1] for name in chunk) if bits else 0
        parts.append((start, start + len(chunk), types.FunctionType(code, scope, code.co_name)))
    if len(parts) == 1:
        return parts[0][2]
    chunks = tuple(parts)

    def set_in_chunks(ep: Episode, row: Row, *values: Any) -> None:
        if len(values) != len(names):
            raise TypeError(f"set_fields() got {len(values)} values for {len(names)} "
                            f"fields {names!r}")
        # each chunk's undo entries keep the caches of before it; undone in reverse, the
        # first chunk's, those of before the group, come back last
        for start, end, part in chunks:
            part(ep, row, *values[start:end])
    return set_in_chunks


class Episode:
    """One run of a world. Generated subclasses fill in the class variables."""

    WORLD: ClassVar[str] = ""
    #: the spec's description of the world (what a prompt shows; not the class docstring,
    #: which ``python -OO`` drops)
    DESCRIPTION: ClassVar[str] = ""
    RESULTS: ClassVar[str] = "envscaler"
    #: how arguments are checked (``config { arguments: ... }``): ``"dynamic"`` when a value
    #: of another JSON type than a parameter's reaches the tool as it is; the tool schemas
    #: declare the types either way
    ARGUMENTS: ClassVar[str] = "worldspec"
    #: whether a call took an argument of another JSON type than its parameter's (only with
    #: ``arguments: dynamic``): from then on the episode may hold, and results may show,
    #: values outside the declared types, which the property checks allow for
    took_other_types: bool = False
    #: state items (values, sequences and tables) stored and hashed but left out of
    #: export_state() (``private`` in the spec)
    PRIVATE: ClassVar[frozenset[str]] = frozenset()
    CLOCK: ClassVar[str] = "2024-01-01T00:00:00"
    TICK: ClassVar[int] = 0
    SEED: ClassVar[int] = 0
    TABLES: ClassVar[dict[str, str]] = {}
    TOOLS: ClassVar[dict[str, ToolSpec]] = {}
    TASKS: ClassVar[Mapping[str, TaskSpec]] = {}
    #: Whether a broken frame ("only changes ...") makes the reward 0. It does, so that an
    #: agent cannot earn reward by doing the task and damaging other state on the way; a
    #: world may set it False, and a task overrides it with a ``frame_zeroes`` attribute.
    FRAME_ZEROES: ClassVar[bool] = True
    #: how a task's checks combine into its reward (``config { reward: ... }``), one of
    #: :data:`worldspec.runtime.rewards.REWARD_MODES`; a task overrides it with ``reward``
    REWARD: ClassVar[str] = DEFAULT_REWARD
    #: the rules the agent must follow (the spec's ``policy``), for its system prompt
    POLICY: ClassVar[str] = ""
    #: the text an unknown tool name fails with, ``{name}`` the name (``unknown_tool`` in the
    #: spec's config); empty: the runtime's own
    UNKNOWN_TOOL: ClassVar[str] = ""
    #: whether results follow tau2's convention with this class's own ``_success``, so that
    #: a call returning a row takes the row's cached text at once (set per class)
    _ROW_TEXT: ClassVar[bool] = False
    #: what is left of the running call's budget (worldspec.runtime.budget)
    _steps: int = budget.MAX_STEPS
    _text: int = budget.MAX_TEXT

    def __init__(self, *, task: str | None = None, data: Mapping[str, Any] | None = None,
                 seed: int | None = None) -> None:
        self._undo: list[tuple[Any, ...]] = []
        #: bumped whenever the non-table state changes, so its text can be cached for hashing
        self._state_version = 0
        self._state_cache: tuple[tuple[int, int], bytes] | None = None
        #: where the RNG was before the running call's first draw (a mark of an
        #: EpisodeRandom, or the state of another generator someone put in ``rng``)
        self._rng_saved: tuple[Any, ...] | None = None
        self._full_check = False
        #: whether the running (or last) call deleted a row, which references must not name
        #: afterwards (the invariant checks look for such references only then)
        self.deleted_rows = False
        self.last_error: ToolError | None = None
        self._last_raw: Any = None
        self._call_mark = 0
        self._base: _Base | None = None
        #: the state right after the last reset, when it cannot be rebuilt from the undo log
        #: (after copy() or restore()); never changed once set
        self._origin: Episode | None = None
        self.tables: dict[str, Table[Any]] = {}
        #: the tables of each entity, whose digests a change to one of its rows makes stale
        self._tables_of: dict[str, list[Table[Any]]] = {}
        self.state: StateBase = self._new_state()
        self.clock = dt.datetime.fromisoformat(self.CLOCK)
        self.rng: random.Random = EpisodeRandom(self.SEED)
        #: the seed of the last reset: the initial state's RNG starts from it again
        self._seed = self.SEED
        self.task: TaskSpec | None = None
        self.reset(task=task, data=data, seed=seed)

    # ---------------------------------------------------------- generated hooks
    def _new_state(self) -> StateBase:
        raise NotImplementedError

    def _load(self, data: Mapping[str, Any]) -> None:
        """Fill tables and state from plain data (validated by generated loaders)."""
        raise NotImplementedError

    def _check_invariants(self) -> None:
        """Raise ToolError with the message of the first invariant that fails."""

    def _bind_tables(self) -> None:
        """Expose each table as the attribute ``t_<name>`` for generated code."""
        tables_of: dict[str, list[Table[Any]]] = {}
        for name, table in self.tables.items():
            setattr(self, "t_" + name, table)
            tables_of.setdefault(table.entity, []).append(table)
        self._tables_of = tables_of

    # ---------------------------------------------------------------- lifecycle
    def reset(self, task: str | None = None, data: Mapping[str, Any] | None = None,
              seed: int | None = None) -> None:
        """Start over from a task's initial data, from ``data``, or from an empty world."""
        spec: TaskSpec | None = None
        self._expect("reset", "task", task, str, "a task name (str) or None", optional=True)
        self._expect("reset", "data", data, Mapping, "a mapping of initial data or None",
                     optional=True)
        if isinstance(seed, bool) or (seed is not None and not isinstance(seed, int)):
            raise TypeError(f"{self._method('reset')}: seed must be an int or None, got "
                            f"{_given(seed)}")
        if task is not None:
            spec = self.TASKS.get(task)
            if spec is None:
                raise self._unknown_task("reset", task)
            if data is None:
                data = spec.data
        data = data if data is not None else {}
        if self._base is not None and self._base.source is data:
            self._rollback(0)  # same initial data: undo what the episode changed
        else:
            previous = (self.tables, self.state, self._undo)
            self._undo = []
            try:
                template = _TEMPLATES.get((type(self), id(data)))
                if template is not None and template[0] is data:
                    self._adopt(template[1])
                else:
                    self.tables = {name: Table(name, entity)
                                   for name, entity in self.TABLES.items()}
                    self._bind_tables()
                    self.state = self._new_state()
                    self._load(data)
                    if spec is not None and spec.data is data:
                        self._remember_template(data)
            except BaseException as exc:  # the episode stays as it was, not half loaded
                self.tables, self.state, self._undo = previous
                self._bind_tables()
                if isinstance(exc, ToolError):
                    raise ValueError(f"{self._method('reset')}: data does not fit world "
                                     f"{self.WORLD}: {exc.message}") from exc
                raise
            self._base = _Base(data)
        self._undo.clear()
        self._origin = None
        self.took_other_types = False  # the loaders took the data: every value is of its type
        self.task = spec
        self.clock = dt.datetime.fromisoformat(self.CLOCK)
        chosen = seed if seed is not None else (spec.seed if spec and spec.seed is not None
                                                else self.SEED)
        self.rng = EpisodeRandom(chosen)
        self._seed = chosen

    def _remember_template(self, data: Mapping[str, Any]) -> None:
        """Keep a copy of the state just loaded from a task's data, with its row digests, so
        that later episodes of the task start from a copy instead of loading and hashing
        the data again (a task's data is shared and never changed)."""
        template = self._clone()
        for table in template.tables.values():
            table.digest()
        if len(_TEMPLATES) >= _TEMPLATES_MAX:
            _TEMPLATES.clear()
        _TEMPLATES[(type(self), id(data))] = (data, template)

    def _adopt(self, template: Episode) -> None:
        """Take a copy of ``template``'s tables and state (rows cloned, digests kept)."""
        self.tables = {name: table.copy() for name, table in template.tables.items()}
        self._bind_tables()
        self.state = template.state.clone()

    def copy(self) -> Episode:
        """An independent episode in the same state (rows are cloned); it scores as this one."""
        other = self._clone()
        other._origin = self._initial_origin()
        return other

    def _initial_origin(self) -> Episode:
        """The episode as it was after the last reset (built once, then shared)."""
        if self._origin is None:
            self._origin = self._rebuild_initial()
        return self._origin

    def _clone(self) -> Episode:
        other = object.__new__(type(self))
        other._undo = []
        other._state_version = 0
        other._state_cache = None
        other._rng_saved = None
        other._full_check = False
        other.deleted_rows = False
        other.last_error = None
        other._last_raw = None
        other._call_mark = 0
        other._base = None
        other._origin = None
        other.tables = {name: t.copy() for name, t in self.tables.items()}
        other._bind_tables()
        other.state = self.state.clone()
        other.clock = self.clock
        other.rng = EpisodeRandom(0)
        other.rng.setstate(self.rng.getstate())
        other._seed = self._seed
        other.task = self.task
        other.took_other_types = self.took_other_types
        return other

    def snapshot(self) -> Snapshot:
        """Save the current state; :meth:`restore` brings it back."""
        return Snapshot({name: {k: r.clone() for k, r in t.rows.items()}
                         for name, t in self.tables.items()},
                        self.state.clone(), self.clock, self.rng.getstate(), self.task,
                        self._initial_origin(), type(self))

    def restore(self, snap: Snapshot) -> None:
        """Bring back a state saved by :meth:`snapshot` of an episode of this very class."""
        if not isinstance(snap, Snapshot):
            raise TypeError(f"{self._method('restore')}: expected a Snapshot from "
                            f"snapshot(), got {_given(snap)}")
        if snap.owner is not type(self):
            raise ValueError(f"{self._method('restore')}: the snapshot was taken from "
                             f"{_episode_class(snap.owner)}, not from {_episode_class(type(self))}")
        self._undo.clear()
        self._base = None
        self._origin = snap.origin
        self.task = snap.task
        for name, rows in snap.tables.items():
            self.tables[name].rows = {k: r.clone() for k, r in rows.items()}
            self.tables[name]._digest = None
        self.state = snap.state.clone()
        self.clock = snap.clock
        self.rng.setstate(snap.rng)

    # ---------------------------------------------------------------- mutation
    # The write API of generated code: one call per statement of the spec that changes
    # state. Each logs what it replaces in the undo log (whose entries only this class
    # reads), so that a failed call, a reset or a rebuilt initial state puts it back.

    def set_field(self, row: Row, name: str, value: Any) -> None:
        """Set field ``name`` of ``row`` to ``value``: the row's cached digest and text are
        cleared (the field's text fragment marked stale) and so are the digests of the
        tables holding rows of its entity. The undo entry keeps the caches of before,
        which an undo puts back (:meth:`Row._put_back`). (A setter made per field, as
        :meth:`set_fields` has, costs as much again to look up as ``getattr`` and
        ``setattr`` by name do.)"""
        frags = row._frags
        stale = row._stale
        self._undo.append((0, row, name, getattr(row, name), row._digest, row._text,
                           frags, stale))  # 0: _SET, a literal (no global read)
        setattr(row, name, value)
        if frags is not None:  # Row._stale_field, inline: the hot path of every write
            found = row._AT.get(name)
            if found is not None:
                row._stale = stale | found[1]
            else:
                row._frags = None
        row._digest = row._text = None
        for table in self._tables_of.get(row.ENTITY, ()):
            table._digest = None

    def set_fields(self, row: Row, names: tuple[str, ...], /, *values: Any) -> None:
        """Set fields ``names`` of ``row`` to ``values`` (in order), as :meth:`set_field` of
        each but with the caches cleared once: what statements setting fields of one row one
        after the other do (the compiler groups them only where no value reads the row).
        Each field's undo entry keeps the caches of before the group, which hold once every
        field of the group is put back (an undo always takes the whole call). The work is
        done by a function made once per row class and field names (:func:`_setter`); the
        names come as one tuple and the values by position, since keyword arguments (a dict
        per call, a key made of its names) cost more than the fields' writes."""
        setter = row._GROUP_SETTERS.get(names)
        if setter is None:
            if len(names) != len(values):
                raise TypeError(f"set_fields() got {len(values)} values for "
                                f"{len(names)} fields {names!r}")
            setter = _setter(type(row), tuple(names))
            if setter is None:  # names that are no fields of a generated class: one by one
                for name, value in zip(names, values, strict=True):
                    self.set_field(row, name, value)
                return
            if "_GROUP_SETTERS" in type(row).__dict__:
                row._GROUP_SETTERS[tuple(names)] = setter
        setter(self, row, *values)

    def append(self, row: Row, name: str, item: Any) -> None:
        """``append item to row.name`` on a list: the field set to the list with ``item`` at
        its end (a list is stored as a tuple)."""
        self.set_field(row, name, (*getattr(row, name), item))

    def add(self, row: Row, name: str, item: Any) -> None:
        """``append item to row.name`` on a set: the field set to the set with ``item`` in
        it (unchanged where it is in it already)."""
        self.set_field(row, name, add(getattr(row, name), item))

    def remove(self, row: Row, name: str, item: Any) -> None:
        """``remove item from row.name``: a list or set without ``item``'s first
        occurrence, a map without the key ``item``; the call fails where there is none."""
        items = getattr(row, name)
        self.set_field(row, name, without_key(items, item) if isinstance(items, dict)
                       else without(items, item))

    def set_state(self, name: str, value: Any) -> None:
        """Set the world's state item ``name`` (a value or a sequence) to ``value``."""
        state = self.state
        self._undo.append((_SET, state, name, getattr(state, name), None))
        setattr(state, name, value)
        self._state_version += 1

    def insert(self, table: Table[Any], row: Row) -> None:
        """Add ``row`` to ``table``; the call fails if a row with its key exists."""
        key = row.key()
        if key in table.rows:
            raise ToolError(f"{table.entity} {_quote(key)} already exists.")
        table.rows[key] = row
        table._digest = None
        self._undo.append((_INSERT, table, key))

    def delete(self, table: Table[Any], key: Any) -> None:
        """Remove the row with ``key`` (or the row itself) from ``table``; the call fails if
        there is none."""
        if isinstance(key, Row):
            key = key.key()
        if key not in table.rows:
            raise ToolError(f"{table.entity} {_quote(key)} not found.")
        position = list(table.rows).index(key)
        row = table.rows.pop(key)
        table._digest = None
        self._undo.append((_DELETE, table, key, row, position))
        self.deleted_rows = True

    def next_id(self, name: str, fmt: str) -> str:
        """Advance sequence ``name`` and give its new number in format ``fmt``."""
        value: int = getattr(self.state, name) + 1
        self.set_state(name, value)
        return fmt.format(value)

    def charge(self, steps: int) -> None:
        """Pay ``steps`` from the running call's budget (:mod:`worldspec.runtime.budget`);
        a spent budget fails the call."""
        left = self._steps - steps
        self._steps = left
        if left < 0:
            budget.out_of_steps()

    #: ``self.built(text)``: a string the call built, checked and charged to the text budget
    #: (:func:`budget.built` itself: the generated code's one way to charge a built string)
    built = budget.built

    def fail(self, message: str) -> NoReturn:
        """The spec's ``fail message`` (or ``require ... else message``) where the message is a
        string the call builds: charged to the text budget as :func:`budget.built` charges
        every built string, then raised as the call's :class:`ToolError`. A message that
        cannot be long (a constant) is raised as it is: ``raise ToolError('...')``."""
        raise ToolError(budget.built(self, message))

    def random_source(self) -> random.Random:
        """The episode's RNG for a draw; the first draw of a call saves its state, so that
        a failed call puts the generator back."""
        rng = self.rng
        if self._rng_saved is None:
            self._rng_saved = rng.mark() if type(rng) is EpisodeRandom else rng.getstate()
        return rng

    def _rollback(self, mark: int) -> None:
        """Undo the log's entries past ``mark``, the last first. A row's field gets its old
        value and the caches its entry kept (:meth:`Row._put_back`, inline: a reset undoes
        every write of the episode this way)."""
        undo = self._undo
        if len(undo) <= mark:
            return
        entries = undo[mark:]
        del undo[mark:]
        tables_of = self._tables_of
        for entry in reversed(entries):
            if len(entry) == 8:  # a row's field (see _SET): its value and caches of before
                _, row, name, old, digest, text, frags, stale = entry
                setattr(row, name, old)
                row._digest = digest
                row._text = text
                if frags is not None:
                    row._frags = frags
                    row._stale = stale
                else:  # the fragments were made after the change: all but this one hold
                    row._stale_field(name)
                for table in tables_of.get(row.ENTITY, ()):
                    table._digest = None
            elif entry[0] == _SET:  # a state item
                setattr(entry[1], entry[2], entry[3])
                self._state_version += 1
            elif entry[0] == _INSERT:
                _, table, key = entry
                del table.rows[key]
                table._digest = None
            else:
                _, table, key, deleted, position = entry
                items = list(table.rows.items())
                items.insert(position, (key, deleted))
                table.rows = dict(items)
                table._digest = None

    # -------------------------------------------------------------------- calls
    def call(self, name: str, arguments: Mapping[str, Any] | str | None = None) -> Any:
        """Run a tool atomically; the result is shaped by the world's result convention.

        What a model can send (an unknown tool name, JSON text that is malformed or not an
        object, decoded JSON that is not an object, bad argument values) is a failed result;
        a name that is not a ``str``, or arguments of a type no JSON decoder gives, is a
        programming error and raises ``TypeError``. Memory running out anywhere in the call
        (reading the arguments, the tool, the result, the failure's own handling) is a failed
        call too, with nothing changed (:data:`budget.MEMORY_MESSAGE`).
        """
        mark = len(self._undo)
        try:  # the call, in this frame (one frame fewer on every call)
            args: Mapping[str, Any]
            if type(arguments) is dict and type(name) is str:  # the common case: one test
                spec = self.TOOLS.get(name)
                if spec is None:
                    return self._unknown_tool(name)
                args = arguments
            else:
                spec, args = self._call_arguments(name, arguments)
                if spec is None:
                    return args  # the failed result of an unknown tool or bad arguments
            self.last_error = None
            self.deleted_rows = False
            self._call_mark = mark
            self._rng_saved = None
            self._steps, self._text = budget.FULL  # a fresh per-call budget (inline: the hot path)
            try:
                value = spec.invoke(self, args)
                if spec.checks:
                    self._check_invariants()
                clock = self._ticked() if self.TICK else self.clock
                if spec.shows is not None:
                    value = self.shown(spec.shows, value)
                # _success's own first case, inline; a row's class is one of RowType, which
                # isinstance answers at once (isinstance(value, Row) asks the metaclass)
                if self._ROW_TEXT and isinstance(type(value), RowType):
                    result = value._text or value._result_text()
                else:
                    result = self._success(value)
            except KeptError as exc:  # `fail keep`: the changes stay, but must keep the rules
                return self._kept(spec, exc)
            except ToolError as exc:
                self._abort(mark)
                return self._fail(exc)
            except RecursionError:
                self._abort(mark)
                return self._fail(ToolError("The call nests too deeply."))
            except RUNTIME_FAILURES as exc:
                self._abort(mark)
                return self._fail(ToolError(describe_failure(exc)))
            except MemoryError:
                raise  # handled below, once the frames holding the memory are gone
            except Exception as exc:  # a bug: still atomic, still a result
                self._abort(mark)
                return self._fail(InternalError(type(exc).__name__, str(exc), name))
            except BaseException:  # KeyboardInterrupt, SystemExit: undo, then let it go on
                self._abort(mark)
                self._last_raw = None
                raise
            self.clock = clock
            self._last_raw = value
            return result
        except MemoryError:
            pass  # handled once out of this block: the exception holds the tool's frames
        return self._out_of_memory(mark)

    def _out_of_memory(self, mark: int) -> Any:
        """The failed result of a call that ran out of memory, its changes rolled back. The
        tool's frames (and what they held) are gone by now; should memory still be short,
        the collector runs and the failure is made again."""
        for _ in range(3):
            try:
                self._abort(mark)
                return self._fail(ToolError(budget.MEMORY_MESSAGE))
            except MemoryError:
                gc.collect()
        self._abort(mark)
        return self._fail(ToolError(budget.MEMORY_MESSAGE))

    def shown(self, shape: tuple[Any, ...], value: Any) -> Any:
        """A tool's result as JSON data, with each key that ``shape`` marks as a whole row
        (``row[E]``) shown as the object of that row's fields. Called as the call ends, it
        shows the rows as the call leaves them; a row the call itself deleted shows what it
        was when deleted; a key no row has (deleted by an earlier call) fails the call.

        ``shape`` is ``("row", table)``, ``("list", shape)``, ``("map", shape)``,
        ``("record", ((json name, attribute, shape), ...))`` (only the fields holding rows)
        or ``("union", tag, ((tag value, record shape), ...))``."""
        if value is None:
            return None
        kind = shape[0]
        if kind == "row":
            return self._shown_row(shape[1], value).export()
        if kind == "list":
            return [self.shown(shape[1], item) for item in value]
        if kind == "map":
            return {key_text(key): self.shown(shape[1], item) for key, item in value.items()}
        data = export_value(value)
        fields = shape[1] if kind == "record" else dict(shape[2]).get(data[shape[1]], ())
        for name, attribute, inner in fields:
            if name in data:  # a record field that may be absent is left out when none
                data[name] = self.shown(inner, getattr(value, attribute))
        return data

    def _shown_row(self, table_name: str, key: Any) -> Row:
        """The row a result shows for ``key`` of ``table_name``'s table (see ``shown``)."""
        if isinstance(key, Row):
            return key
        table = self.tables[table_name]
        row: Row | None = table.rows.get(key)
        if row is not None:
            return row
        for entry in reversed(self._undo[self._call_mark:]):
            if entry[0] == _DELETE and entry[1] is table and entry[2] == key:
                deleted: Row = entry[3]
                return deleted
        raise ToolError(f"{table.entity} {_quote(key)} no longer exists, so the result "
                        "cannot show it.")

    def _call_arguments(self, name: object, arguments: object) -> tuple[ToolSpec | None, Any]:
        """``call``'s checks of a name that is no ``str`` or arguments that are no ``dict``:
        a ``TypeError`` for a programming error, else the tool's spec and its arguments as a
        mapping, or ``None`` and the failed result of an unknown tool or of arguments that are
        not a JSON object (the name is looked up before the arguments are decoded)."""
        if not isinstance(name, str):
            raise TypeError(f"{self._method('call')}: name must be a tool name (str), got "
                            f"{_given(name)}")
        if arguments is not None and not isinstance(arguments, _CALL_ARGUMENTS):
            raise TypeError(f"{self._method('call')}: arguments must be a mapping of "
                            "argument names to values, JSON text or None, got "
                            f"{_given(arguments)}")
        spec = self.TOOLS.get(name)
        if spec is None:
            return None, self._unknown_tool(name)
        if arguments is None:
            arguments = {}
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except (ValueError, RecursionError) as exc:
                return None, self._fail(ArgumentError(f"Arguments are not valid JSON: {exc}"))
        if not isinstance(arguments, Mapping):
            return None, self._fail(ArgumentError("Arguments must be a JSON object."))
        return spec, arguments

    def _unknown_tool(self, name: str) -> Any:
        return self._fail(ArgumentError(
            self.UNKNOWN_TOOL.replace("{name}", name) if self.UNKNOWN_TOOL
            else f"Unknown tool {_quote(name)}."))

    def _kept(self, spec: ToolSpec, error: KeptError) -> Any:
        """A ``fail keep`` failure: what the call changed stays (and so do its draws), unless
        the state it leaves breaks an invariant; then the call is undone like any other."""
        try:
            if not spec.read_only:
                self._check_invariants()
        except ToolError as exc:
            self._abort(self._call_mark)
            return self._fail(exc)
        self._rng_saved = None
        return self._fail(error)

    def _ticked(self) -> dt.datetime:
        """The clock after a successful call; a clock at the end of time fails the call."""
        try:
            return self.clock + dt.timedelta(seconds=self.TICK)
        except OverflowError:
            raise ToolError(f"The clock cannot advance {self.TICK} s past "
                            f"{self.clock.isoformat()}: it would pass the last representable "
                            "time (9999-12-31).") from None

    @property
    def last_value(self) -> Any:
        """The result of the last successful call, as plain JSON data."""
        return export_value(self._last_raw)

    def _abort(self, mark: int) -> None:
        self._rollback(mark)
        saved = self._rng_saved
        if saved is not None:
            rng = self.rng
            if type(rng) is EpisodeRandom:
                rng.rewind(saved)
            else:
                rng.setstate(saved)
            self._rng_saved = None

    def _fail(self, error: ToolError) -> Any:
        self.last_error = error
        self._last_raw = None
        return self._failure(error.message)

    def invariant_problem(self) -> InvariantError | None:
        """Check every invariant and reference over the whole state (not just changed rows)."""
        self._full_check = True
        budget.refill(self)
        try:
            self._check_invariants()
        except InvariantError as exc:
            return exc
        except ToolError as exc:
            return InvariantError(exc.message)
        finally:
            self._full_check = False
        return None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._ROW_TEXT = cls.RESULTS == "tau2" and cls._success is Episode._success

    def _success(self, value: Any) -> Any:
        if self.RESULTS == "tau2":
            if isinstance(value, Row):
                return value._result_text()  # cached until the row changes
            data = export_value(value)
            return data if isinstance(data, str) else json_text(data)
        data = export_value(value)
        if self.RESULTS == "envscaler":
            return {"success": True, "data": data}
        return data

    def _failure(self, message: str) -> Any:
        if self.RESULTS == "envscaler":
            return {"success": False, "error": message}
        if self.RESULTS == "tau2":
            return f"Error: {message}"
        return {"error": message}

    def failed(self, result: Any) -> bool:
        """Whether a result returned by :meth:`call` is a failure."""
        if self.RESULTS == "envscaler":
            return isinstance(result, dict) and result.get("success") is False
        if self.RESULTS == "tau2":
            return isinstance(result, str) and result.startswith("Error: ")
        return isinstance(result, dict) and set(result) == {"error"}

    # -------------------------------------------------------------------- state
    def export_state(self, *, private: bool = False) -> dict[str, Any]:
        """The public state as plain JSON data (tables as lists of rows); with ``private``,
        the world's private state items too (they are always stored, hashed and diffed)."""
        out: dict[str, Any] = {name: [r.export() for r in t.rows.values()]
                               for name, t in self.tables.items()
                               if private or name not in self.PRIVATE}
        values = self.state.export()
        if self.PRIVATE and not private:
            values = {k: x for k, x in values.items() if k not in self.PRIVATE}
        out.update(values)
        return out

    def state_hash(self) -> str:
        """SHA-256 of the state: stable across processes and machines."""
        import hashlib

        h = hashlib.sha256()
        key = (id(self.state), self._state_version)
        if self._state_cache is None or self._state_cache[0] != key:
            self._state_cache = (key, canonical_json(self.state.export()).encode())
        h.update(self._state_cache[1])
        for name, table in self.tables.items():
            h.update(b"\x00" + name.encode() + b"\x00")
            h.update(table.digest())
        return h.hexdigest()

    def matches_solution(self, initial: Episode, task: str) -> bool:
        """Whether the state equals the one ``task``'s reference solution leaves when it is
        replayed from ``initial`` (a check such as tau2's "the DB matches the gold DB").

        The reference state's hash is computed once per world, task and starting state
        (with its RNG and clock).
        """
        key = (type(self), task, initial.state_hash(), initial.rng.getstate(), initial.clock)
        expected = _SOLUTION_HASHES.get(key)
        if expected is None:
            expected = initial._replayed_hash(task)
            if len(_SOLUTION_HASHES) >= _SOLUTION_HASHES_MAX:
                _SOLUTION_HASHES.clear()
            _SOLUTION_HASHES[key] = expected
        return self.state_hash() == expected

    def solution_verdict(self, initial: Episode, task: str) -> Verdict:
        """:meth:`matches_solution` with the reason when it does not hold: the first path
        where the state differs from the reference solution's, with the expected and found
        values (the solution is replayed on a copy of ``initial`` only then)."""
        if self.matches_solution(initial, task):
            return Verdict(True)
        expected = initial._clone()
        for name, arguments in self.TASKS[task].solution:
            expected.call(name, dict(arguments))
        return Verdict(False, state_difference(self.diff(expected)))

    def _replayed_hash(self, task: str) -> str:
        """The state hash that ``task``'s reference solution leaves when replayed from this
        state. The episode is left as it was: its changes are rolled back through the undo
        log, its RNG and its own attributes (clock, last error, …) put back, whatever the
        replay did (a copy of the whole episode per task cost more than the replay)."""
        saved = dict(vars(self))
        rng = self.rng.getstate()
        mark = len(self._undo)
        try:
            for name, arguments in self.TASKS[task].solution:
                self.call(name, dict(arguments))
            return self.state_hash()
        finally:
            self._rollback(mark)
            self.rng.setstate(rng)
            for added in vars(self).keys() - saved.keys():
                delattr(self, added)
            vars(self).update(saved)

    def diff(self, other: Episode) -> list[dict[str, Any]]:
        """What differs from ``other``: one entry per changed state item, row or field."""
        self._same_world("diff", "other", other)
        changes: list[dict[str, Any]] = []
        mine, theirs = self.state.export(), other.state.export()
        for name in mine:
            if mine[name] != theirs.get(name):
                change = {"path": name, "old": theirs.get(name), "new": mine[name]}
                if name in self.PRIVATE:
                    change["private"] = True
                changes.append(change)
        for name, table in self.tables.items():
            first = len(changes)
            old_rows = other.tables[name].rows
            for key, row in table.rows.items():
                before = old_rows.get(key)
                if before is None:
                    changes.append({"path": f"{name}[{_quote(key)}]",
                                    "old": None, "new": row.export()})
                elif before.digest() != row.digest():
                    a, b = before.export(), row.export()
                    for fname in b:
                        if a.get(fname) != b[fname]:
                            changes.append({
                                "path": f"{name}[{_quote(key)}].{fname}",
                                "old": a.get(fname), "new": b[fname]})
            for key, before in old_rows.items():
                if key not in table.rows:
                    changes.append({"path": f"{name}[{_quote(key)}]",
                                    "old": before.export(), "new": None})
            if name in self.PRIVATE:
                for change in changes[first:]:
                    change["private"] = True
        return changes

    # ----------------------------------------------------------------- scoring
    def initial_state(self) -> Episode:
        """A copy of the episode as it was right after the last reset."""
        if self._origin is not None:
            return self._origin._clone()
        return self._rebuild_initial()

    def _rebuild_initial(self) -> Episode:
        """The state after the last reset: a copy with the undo log played backwards."""
        initial = self._clone()
        by_entity = {t.entity: initial.tables[name] for name, t in self.tables.items()}
        by_table = {id(t): initial.tables[name] for name, t in self.tables.items()}
        for entry in reversed(self._undo):
            kind = entry[0]
            if kind == _SET:
                obj, name, old = entry[1], entry[2], entry[3]
                if isinstance(obj, Row):
                    target = by_entity[obj.ENTITY].rows[obj.key()]
                    setattr(target, name, old)
                    # the text and digest before the change hold for the copy's values too
                    target._put_back((name,), *entry[4:])
                    by_entity[obj.ENTITY]._digest = None  # the copy's digest is the current one
                else:
                    setattr(initial.state, name, old)
            elif kind == _INSERT:
                _, table, key = entry
                del by_table[id(table)].rows[key]
                by_table[id(table)]._digest = None
            else:
                _, table, key, row, position = entry
                copy_table = by_table[id(table)]
                items = list(copy_table.rows.items())
                items.insert(position, (key, row.clone()))
                copy_table.rows = dict(items)
                copy_table._digest = None
        initial.clock = dt.datetime.fromisoformat(self.CLOCK)
        initial.rng = EpisodeRandom(self._seed)  # what a replay of the solution draws from
        return initial

    def score(self, task: str | None = None, *, all_or_nothing: bool = False,
              initial: Episode | None = None, frame_zeroes: bool | None = None,
              replies: Sequence[str] = (), reward: str | None = None) -> Score:
        """Grade the current state against a task's checks and frame. A check never raises.

        The checks combine as the task's reward mode says (``reward`` in the task, else the
        world's :attr:`REWARD`; the argument ``reward`` overrides both): ``weighted``, the
        weighted share of passed checks; ``mean``, the share of passed checks; ``all``, 1
        when every check and the frame hold, else 0. ``all_or_nothing=True`` is
        ``reward="all"``. Under ``weighted`` and ``mean`` the reward is 0 when the frame is
        broken (collateral damage earns nothing) unless ``frame_zeroes`` is False (default:
        the task's ``frame_zeroes`` attribute if it has one, else the world's
        :attr:`FRAME_ZEROES`); ``checks_reward`` keeps the checks' combination either way,
        and ``passed`` says whether every check and the frame hold.
        ``initial`` is :meth:`initial_state`, when the caller has already built it.
        ``replies`` are the text of the agent's messages to the user, in order; answer
        checks read them (``reply`` is the last one). Without them the agent said nothing.
        An unknown task (``KeyError``), replies that are not text (``TypeError``) and an
        unknown reward mode (``ValueError``) are the caller's mistakes and raise.
        """
        self._expect("score", "task", task, str, "a task name (str) or None", optional=True)
        self._expect("score", "reward", reward, str, "a reward mode (str) or None",
                     optional=True)
        spec = self.TASKS.get(task) if task is not None else self.task
        if spec is None:
            if task is not None:
                raise self._unknown_task("score", task)
            raise ValueError(f"{self._method('score')}: no task to score: the episode was not "
                             f"reset to a task; pass one of {_names(self.TASKS)}")
        mode = "all" if all_or_nothing else reward or spec.reward or self.REWARD
        if mode not in REWARD_MODES:
            raise ValueError(f"{self._method('score')}: unknown reward mode {mode!r}; the "
                             f"modes are {', '.join(REWARD_MODES)}")
        said = _replies(replies)
        if initial is None:
            initial = self.initial_state()
        else:
            self._same_world("score", "initial", initial)
        outcomes: list[CheckOutcome] = []
        for check in spec.checks:
            budget.refill(self)
            detail = None
            try:
                verdict = check.test(self, initial, said)
                passed = bool(verdict)
                message = "" if passed else (check.doc or "the check does not hold")
                if not passed and isinstance(verdict, Verdict):
                    detail = verdict.detail
            except ToolError as exc:
                passed, message = False, f"error: {exc.message}"
            except Exception as exc:  # a check never raises: it fails and says why
                passed, message = False, f"error: {type(exc).__name__}: {exc}"
            outcomes.append(CheckOutcome(check.name, passed, check.weight, message, detail))
        broken = self._frame_violations(initial, spec.frame)
        violations = tuple(change["path"] for change in broken)
        checks_reward = combine_checks(mode, [(c.passed, c.weight) for c in outcomes])
        earned = checks_reward
        if frame_zeroes is None:
            frame_zeroes = bool(getattr(spec, "frame_zeroes", self.FRAME_ZEROES))
        if violations and (frame_zeroes or REWARD_MODES[mode].counts_frame):
            earned = 0.0
        return Score(earned, tuple(outcomes), not violations, violations, checks_reward,
                     tuple(broken[:FRAME_CHANGES_SHOWN]))

    def _frame_violations(self, initial: Episode, frame: tuple[str, ...] | None
                          ) -> list[dict[str, Any]]:
        """The changes since ``initial`` that the frame does not allow."""
        if frame is None:
            return []
        allowed_tables = {f for f in frame if "." not in f}
        allowed_fields: dict[str, set[str]] = {}
        for f in frame:
            if "." in f:
                table, name = f.split(".", 1)
                allowed_fields.setdefault(table, set()).add(name)
        out: list[dict[str, Any]] = []
        for change in self.diff(initial):
            path = change["path"]
            head = path.split("[", 1)[0]
            if head in allowed_tables:
                continue
            if "]." in path and head in allowed_fields:
                field_name = path.rsplit("].", 1)[1]
                if field_name in allowed_fields[head]:
                    continue
            out.append(change)
        return out

    # ------------------------------------------------------------- API misuse
    def _method(self, name: str) -> str:
        return f"{type(self).__name__}.{name}()"

    def _expect(self, method: str, param: str, value: object, kind: type | tuple[type, ...],
                expected: str, *, optional: bool = False) -> None:
        """Raise ``TypeError`` naming the method unless ``value`` is a ``kind``."""
        if (value is None and optional) or isinstance(value, kind):
            return
        raise TypeError(f"{self._method(method)}: {param} must be {expected}, got "
                        f"{_given(value)}")

    def _unknown_task(self, method: str, task: str) -> KeyError:
        import difflib

        close = difflib.get_close_matches(task, list(self.TASKS), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        return KeyError(f"{self._method(method)}: world {self.WORLD} has no task {task!r}"
                        f"{hint} (tasks: {_names(self.TASKS)})")

    def _same_world(self, method: str, param: str, other: object) -> None:
        """Raise unless ``other`` is an episode of this world with the same tables."""
        if not isinstance(other, Episode):
            raise TypeError(f"{self._method(method)}: {param} must be an Episode, got "
                            f"{_given(other)}")
        if other.WORLD != self.WORLD or other.TABLES != self.TABLES or \
                type(other.state).FIELDS != type(self.state).FIELDS:
            raise ValueError(f"{self._method(method)}: {param} is an episode of "
                             f"{_episode_class(type(other))}, not of world {self.WORLD}")

    def tools(self, format: str = "chat") -> list[dict[str, Any]]:
        """OpenAI tool definitions with strict-mode JSON schemas."""
        from worldspec.runtime.schema import tool_definitions

        return tool_definitions(self.TOOLS.values(), format)


def _replies(replies: Sequence[str]) -> tuple[str, ...]:
    """The agent's messages as a tuple of text; anything else is the caller's mistake."""
    if isinstance(replies, str) or not all(isinstance(r, str) for r in replies):
        raise TypeError("replies must be a list of message texts (str), e.g. "
                        "score(replies=[\"Your total is $54.04.\"])")
    return tuple(replies)


#: the text of such an exception raised without one
_BARE_RUNTIME_ERRORS: dict[type[BaseException], str] = {
    ZeroDivisionError: "division by zero", OverflowError: "number too large",
    IndexError: "index out of range"}


#: Python errors of a tool's own arithmetic, indexing and conversions: the call fails with
#: :func:`describe_failure`'s text (``attempt()`` and ``error_of()`` catch the same)
RUNTIME_FAILURES = (ArithmeticError, IndexError, KeyError, ValueError, TypeError)


def describe_failure(exc: BaseException) -> str:
    """The failure text of an exception raised by a tool's own arithmetic or indexing (one of
    :data:`RUNTIME_FAILURES`).

    Division by zero, overflow and a bad index fail with Python's own texts (``division by
    zero``, ``float division by zero``, ``int too large to convert to float``, ``list index out
    of range``), as the originals a world reproduces do; a missing key names the key (Python's
    text would be its repr alone)."""
    for kind, bare in _BARE_RUNTIME_ERRORS.items():
        if isinstance(exc, kind):
            return str(exc) or bare
    if isinstance(exc, KeyError):
        return f"Key {_quote(exc.args[0]) if exc.args else 'null'} not found."
    return f"Invalid value: {exc}"


#: what ``call`` takes as arguments: a mapping, JSON text, or what decoding JSON text that
#: is not an object gives (a model's mistake: a failed result, not an exception)
_CALL_ARGUMENTS = (dict, str, Mapping, list, int, float)


def _given(value: object) -> str:
    """What a caller passed, for an API error: its type and the start of its repr."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def _names(tasks: Mapping[str, Any]) -> str:
    return ", ".join(repr(name) for name in sorted(tasks)) or "none"


def _episode_class(cls: type[Episode] | None) -> str:
    if cls is None:
        return "an unknown episode class"
    return f"world {cls.WORLD} ({cls.__module__}.{cls.__qualname__})"
