"""Value classes without :mod:`dataclasses`, so that importing a generated world stays quick.

Importing :mod:`dataclasses` loads ``inspect``, ``dis``, ``tokenize`` and ``ast`` (about 8 ms),
and it makes each class's methods by compiling their source (about 1 ms a class): most of a
world's import. So:

- a generated record subclasses :class:`Record` and declares its fields
  (:func:`~worldspec.runtime.contract.field`); its metaclass (:class:`RecordType`) makes its
  slots and builds its ``__init__`` (a ``__new__``), ``__match_args__``, ``__eq__``,
  ``__hash__``, ``__repr__``, ``export``, ``load`` and kept JSON text once per class (what
  ``@dataclass(frozen=True, slots=True)`` made before, and what generated code wrote out);
  :class:`Record` makes it frozen and lets ``copy`` and ``pickle`` rebuild it, as the
  dataclass's ``__getstate__``/``__setstate__`` did;
- :func:`replace_fields` is ``dataclasses.replace`` for such a record;
- :func:`value_class` makes the runtime's own value classes (``ToolSpec``, ``TaskSpec``,
  ``Score``...) as ``@dataclass`` (``frozen=True`` or not) makes them, from the class's
  annotations and defaults, with methods that are closures rather than compiled source.

What they make behaves as the dataclass did (the same ``__init__`` parameters, ``repr``,
equality, hash and frozenness, assigning raises :class:`dataclasses.FrozenInstanceError`),
except that the classes are no dataclasses to the :mod:`dataclasses` functions
(``fields()``, ``asdict()``, ``replace()``): none of the project uses them on these classes.
"""

from __future__ import annotations

import _thread
from collections.abc import Callable
from itertools import pairwise
from operator import attrgetter
from typing import Any, ClassVar, NoReturn, Self, TypeVar, dataclass_transform, overload

from worldspec.runtime.contract import (
    Field,
    FieldTable,
    attribute_filler,
    declared_fields,
    field,
    kept_text,
    record_maker,
    slot_setters,
)
from worldspec.runtime.values import json_text

__all__ = ["Record", "RecordType", "listed_names", "replace_fields", "value_class"]

T = TypeVar("T")


def _frozen(verb: str, name: str) -> NoReturn:
    """Raise what a frozen dataclass raises (imported here only: a failure's path)."""
    from dataclasses import FrozenInstanceError

    raise FrozenInstanceError(f"cannot {verb} field {name!r}")


class RecordType(type):
    """The metaclass of generated records: turns a record's :class:`~worldspec.runtime.
    contract.Field` declarations into its slots (the fields and ``_json``, its kept JSON
    text) and builds its methods once (:func:`_build_record`)."""

    def __new__(mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any],
                **kwargs: Any) -> RecordType:
        if not any(isinstance(base, RecordType) for base in bases):
            return super().__new__(mcls, name, bases, namespace, **kwargs)
        fields = declared_fields(namespace)
        for f in fields:
            del namespace[f.name]
        # a record whose fields are all immutable keeps its JSON text; no other value has a
        # ``_json`` attribute (``values.record_text`` relies on it). The slots are a base
        # class's, shared with the class a record is made as (see ``_build_record``)
        keeps = all(f.keeps_text for f in fields)
        slots = type(f"{name}Slots", (), {
            "__slots__": (*(f.name for f in fields), *(("_json",) if keeps else ())),
            "__qualname__": f"{namespace.get('__qualname__', name)}.Slots",
            "__module__": namespace.get("__module__")})
        namespace["__slots__"] = ()
        namespace["__match_args__"] = tuple(f.name for f in fields)
        cls = super().__new__(mcls, name, (slots, *bases), namespace, **kwargs)
        _build_record(cls, slots, fields)
        return cls


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
class Record(metaclass=RecordType):
    """The base of a generated record: an immutable value with slots.

    A record declares its fields (:func:`~worldspec.runtime.contract.field`); its class
    gets, as ``@dataclass(frozen=True, slots=True)`` gave it, ``__init__`` (positional or
    keyword arguments), ``__eq__`` (same class, equal fields), ``__hash__``, ``__repr__``
    and ``__match_args__``, and besides ``export()``, ``load()`` and ``_json_text()`` (its
    JSON text, made once when every field is immutable all the way down). Its fields are
    set once, through the slots' own setters; assigning or deleting an attribute afterwards
    fails as on a frozen dataclass. ``copy``, ``deepcopy`` and ``pickle`` get and restore
    the slots' values in order.
    """

    __slots__ = ()
    #: the names of the fields, in order
    __match_args__: ClassVar[tuple[str, ...]] = ()
    #: the fields' declarations, as the runtime uses them
    FIELD_TABLE: ClassVar[FieldTable]
    #: the record's JSON text, once made (``None`` before)
    _json: str | None

    def __setattr__(self, name: str, value: object) -> None:
        _frozen("assign to", name)

    def __delattr__(self, name: str) -> None:
        _frozen("delete", name)

    def __getstate__(self) -> list[Any]:
        return [getattr(self, name) for name in _slots(type(self))]

    def __getnewargs__(self) -> tuple[Any, ...]:
        return self.FIELD_TABLE.get(self)

    def __setstate__(self, state: list[Any]) -> None:
        for name, value in zip(_slots(type(self)), state, strict=False):
            object.__setattr__(self, name, value)

    def export(self) -> dict[str, Any]:
        """The record as plain JSON data."""
        return self.FIELD_TABLE.export(self)

    def _json_text(self) -> str:
        """``json.dumps(self.export())``."""
        return json_text(self.export())

    @classmethod
    def load(cls, data: object, path: str, ep: Any) -> Self:
        """The record from plain JSON data, checked (``ep``: the episode, for defaults)."""
        raise NotImplementedError


def _build_record(cls: Any, slots: type, fields: tuple[Field, ...]) -> None:
    """Give record class ``cls`` its methods, closures over its ``fields``.

    A record is made as an instance of a class without the frozen ``__setattr__``
    (``Made``, of the same ``slots``: its slots' stores are plain stores), filled, then made
    one of ``cls`` (the same layout): that is ``cls.__new__``, so calling the class costs
    about what the statements written out would."""
    table = FieldTable(fields)
    cls.FIELD_TABLE = table
    names = table.names
    count = len(names)
    title = cls.__qualname__
    keeps = all(f.keeps_text for f in fields)
    set_json = slot_setters(cls, ("_json",))[0] if keeps else None
    fill = attribute_filler(names)
    made_class: Any = type(f"{cls.__name__}Made", (slots,), {
        "__slots__": (), "__qualname__": f"{title}.Made", "__module__": cls.__module__})
    get = table.get

    def __new__(klass: Any, *args: Any, **kwargs: Any) -> Any:
        if kwargs or len(args) != count:
            args = _bound(title, names, args, kwargs)
        record = made_class()  # (cheaper than object.__new__: no check of the MRO)
        fill(record, args)
        if keeps:
            record._json = None
        record.__class__ = klass
        return record

    fast_new = record_maker(names, made_class, keeps, f"{title}.__init__")
    if fast_new is not None:
        __new__ = fast_new

    def made(values: tuple[Any, ...]) -> Any:
        record = made_class()  # (cheaper than object.__new__: no check of the MRO)
        fill(record, values)
        if keeps:
            record._json = None
        record.__class__ = cls
        return record

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return get(self) == get(other)
        return NotImplemented

    def __hash__(self: Any) -> int:
        return hash(get(self))

    def __repr__(self: Any) -> str:
        shown = ", ".join(f"{name}={value!r}"
                          for name, value in zip(names, get(self), strict=True))
        return f"{self.__class__.__qualname__}({shown})"

    load_values = table.load

    def load(klass: Any, data: object, path: str, ep: Any) -> Any:
        return made(load_values(data, path, ep))

    methods: dict[str, Any] = {"__new__": __new__, "__eq__": __eq__, "__hash__": __hash__,
                               "__repr__": __repr__, "load": classmethod(load)}
    make_text = table.text
    kept = kept_text(fields, set_json, lambda record: json_text(table.export(record)),
                     title) if set_json is not None else None
    if kept is not None:
        methods["_json_text"] = kept
    elif make_text is not None and keeps:
        export = table.export

        def _json_text(self: Any) -> str:
            text: str | None = self._json
            if text is None:
                try:
                    text = make_text(self)
                except (TypeError, KeyError, AttributeError):
                    # a field holds a value of another type than declared (``arguments:
                    # dynamic``): the text of the export
                    text = json_text(export(self))
                set_json(self, text)  # type: ignore[misc]
            return text

        methods["_json_text"] = _json_text
    elif not keeps:
        pass  # Record's: the export's text, made every time
    else:  # a field left out when none: the export's text, kept
        def _kept_export_text(self: Any) -> str:
            text: str | None = self._json
            if text is None:
                text = json_text(self.export())
                set_json(self, text)  # type: ignore[misc]
            return text

        methods["_json_text"] = _kept_export_text
    for attribute, method in methods.items():
        function = method.__func__ if isinstance(method, (classmethod, staticmethod)) \
            else method
        # (``__new__`` binds the arguments as the dataclass's ``__init__`` did, and says so)
        function.__qualname__ = f"{title}.{'__init__' if attribute == '__new__' else attribute}"
        setattr(cls, attribute, method)


def listed_names(quoted: list[str]) -> str:
    """Names as Python's own argument errors list them: ``'a'``, ``'a' and 'b'``,
    ``'a', 'b', and 'c'``."""
    if len(quoted) <= 2:
        return " and ".join(quoted)
    return ", ".join(quoted[:-1]) + ", and " + quoted[-1]


def _bound(title: str, names: tuple[str, ...], args: tuple[Any, ...],
           kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """The values of a record's fields from the arguments of its ``__init__``, bound as a
    dataclass's ``__init__`` binds them (with its errors)."""
    count = len(args)
    if count > len(names):
        raise TypeError(f"{title}.__init__() takes {len(names) + 1} positional arguments but "
                        f"{count + 1} were given")
    for name in kwargs:
        if name not in names:
            raise TypeError(f"{title}.__init__() got an unexpected keyword argument {name!r}")
        if names.index(name) < count:
            raise TypeError(f"{title}.__init__() got multiple values for argument {name!r}")
    missing = [name for name in names[count:] if name not in kwargs]
    if missing:
        listed = listed_names([repr(name) for name in missing])
        raise TypeError(f"{title}.__init__() missing {len(missing)} required positional "
                        f"argument{'s' if len(missing) > 1 else ''}: {listed}")
    return (*args, *(kwargs[name] for name in names[count:]))


#: per record class, its slots in layout order (a generated record's are its base class's)
_SLOTS: dict[type, tuple[str, ...]] = {}


def _slots(cls: type) -> tuple[str, ...]:
    found = _SLOTS.get(cls)
    if found is None:
        found = _SLOTS[cls] = tuple(name for klass in reversed(cls.__mro__)
                                    for name in vars(klass).get("__slots__", ()))
    return found


R = TypeVar("R", bound=Record)


def replace_fields(record: R, /, **changes: Any) -> R:
    """``dataclasses.replace(record, **changes)``: a new record of the same class, with
    ``changes`` and the other fields as they are (its JSON text made anew)."""
    cls = type(record)
    values = {name: getattr(record, name) for name in cls.__match_args__}
    values.update(changes)
    return cls(**values)


#: sets an attribute past a frozen class's ``__setattr__`` (as a frozen dataclass's does)
_set_attribute = object.__setattr__

#: (id of the instance, thread) of each value-class ``repr`` under way: a value that holds
#: itself is shown as ``...`` there, as a dataclass's ``repr`` does
_IN_REPR: set[tuple[int, int]] = set()


@overload
def value_class(cls: type[T], /) -> type[T]: ...


@overload
def value_class(*, frozen: bool = False) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform()
def value_class(cls: type[T] | None = None, /, *, frozen: bool = False
                ) -> type[T] | Callable[[type[T]], type[T]]:
    """Make a value class, as ``@dataclass`` or ``@dataclass(frozen=True)`` would, without
    importing :mod:`dataclasses` (that import costs a world's import about 8 ms; see the
    module's docstring): for a class whose fields are plain annotated names with or without
    a default (no ``field()``, ``ClassVar`` or ``InitVar``), it adds ``__init__`` (then
    ``__post_init__`` when the class has one), ``__repr__``, ``__eq__``, ``__match_args__``,
    and, when frozen, ``__hash__`` and frozenness. It is not the standard library's: the
    class is no dataclass to ``dataclasses.fields()``, ``asdict()`` or ``replace()``."""

    def make(cls: type[T]) -> type[T]:
        own = cls.__dict__
        names = tuple(own.get("__annotations__", {}))
        defaults = {name: own[name] for name in names if name in own}
        for before, name in pairwise(names):
            if before in defaults and name not in defaults:
                raise TypeError(f"non-default argument {name!r} follows default argument")
        known = frozenset(names)
        title = cls.__qualname__
        post_init = hasattr(cls, "__post_init__")
        tail = tuple(defaults.get(name) for name in names)
        least = len(names) - len(defaults) + 1  # self and the fields without a default
        takes = f"from {least} to {len(names) + 1}" if defaults else str(len(names) + 1)

        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            count = len(args)
            if count > len(names):
                raise TypeError(f"{title}.__init__() takes {takes} positional arguments but "
                                f"{count + 1} were given")
            values = list(args)
            if kwargs or count < len(names):
                for name in kwargs:
                    if name not in known:
                        raise TypeError(f"{title}.__init__() got an unexpected keyword "
                                        f"argument {name!r}")
                    if names.index(name) < count:
                        raise TypeError(f"{title}.__init__() got multiple values for "
                                        f"argument {name!r}")
                missing = [name for name in names[count:]
                           if name not in kwargs and name not in defaults]
                if missing:
                    quoted = [repr(name) for name in missing]
                    listed = quoted[0] if len(quoted) == 1 else (
                        ", ".join(quoted[:-1]) + " and " + quoted[-1])
                    raise TypeError(f"{title}.__init__() missing {len(missing)} required "
                                    f"positional argument{'s' if len(missing) > 1 else ''}: "
                                    f"{listed}")
                values += [kwargs[name] if name in kwargs else tail[i]
                           for i, name in enumerate(names[count:], count)]
            for name, value in zip(names, values, strict=True):
                # not ``self.__dict__.update``: reading ``__dict__`` makes the instance's
                # values a dict of their own, whose reads the interpreter never specialises
                # (left inline, a field is read in one specialised step)
                _set_attribute(self, name, value)
            if post_init:
                self.__post_init__()

        # the fields' values as a tuple (``attrgetter`` of one name gives the value alone)
        fields_of: Callable[[Any], tuple[Any, ...]]
        if len(names) > 1:
            fields_of = attrgetter(*names)
        elif names:
            single = attrgetter(names[0])
            fields_of = lambda obj: (single(obj),)  # noqa: E731
        else:
            fields_of = lambda obj: ()  # noqa: E731

        def __repr__(self: Any) -> str:
            key = (id(self), _thread.get_ident())
            if key in _IN_REPR:
                return "..."
            _IN_REPR.add(key)
            try:
                shown = ", ".join(f"{name}={value!r}"
                                  for name, value in zip(names, fields_of(self), strict=True))
            finally:
                _IN_REPR.discard(key)
            return f"{type(self).__qualname__}({shown})"

        def __eq__(self: Any, other: Any) -> Any:
            if other.__class__ is self.__class__:
                return fields_of(self) == fields_of(other)
            return NotImplemented

        made: dict[str, Any] = {"__init__": __init__, "__repr__": __repr__, "__eq__": __eq__,
                                "__match_args__": names}
        if frozen:
            def __setattr__(self: Any, name: str, value: Any) -> None:
                if type(self) is cls or name in known:
                    _frozen("assign to", name)
                super(cls, self).__setattr__(name, value)

            def __delattr__(self: Any, name: str) -> None:
                if type(self) is cls or name in known:
                    _frozen("delete", name)
                super(cls, self).__delattr__(name)

            def __hash__(self: Any) -> int:
                return hash(fields_of(self))

            made |= {"__setattr__": __setattr__, "__delattr__": __delattr__,
                     "__hash__": __hash__}
        elif "__hash__" not in own:
            made["__hash__"] = None  # equal by value, so unhashable, as a dataclass
        for attribute, value in made.items():
            if attribute in ("__setattr__", "__delattr__") and attribute in own:
                raise TypeError(f"Cannot overwrite attribute {attribute} in class {title}")
            if attribute not in own or attribute == "__hash__":
                if callable(value):
                    value.__qualname__ = f"{title}.{attribute}"
                setattr(cls, attribute, value)
        return cls

    return make if cls is None else make(cls)
