"""Value classes without :mod:`dataclasses`, so that importing a generated world stays quick.

Importing :mod:`dataclasses` loads ``inspect``, ``dis``, ``tokenize`` and ``ast`` (about 8 ms),
and it makes each class's methods by compiling their source (about 1 ms a class): most of a
world's import. So:

- a generated record subclasses :class:`Record` and writes out its ``__slots__``,
  ``__match_args__``, ``__eq__``, ``__hash__`` and ``__repr__`` (what ``@dataclass(frozen=True,
  slots=True)`` made before); :class:`Record` makes it frozen and lets ``copy`` and ``pickle``
  rebuild it, as the dataclass's ``__getstate__``/``__setstate__`` did;
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
from typing import Any, ClassVar, NoReturn, TypeVar, dataclass_transform, overload

__all__ = ["Record", "replace_fields", "value_class"]

T = TypeVar("T")


def _frozen(verb: str, name: str) -> NoReturn:
    """Raise what a frozen dataclass raises (imported here only: a failure's path)."""
    from dataclasses import FrozenInstanceError

    raise FrozenInstanceError(f"cannot {verb} field {name!r}")


class Record:
    """The base of a generated record: an immutable value with slots.

    Its fields are set once, by its ``__init__`` (or ``_new_X``) through the slots' own
    setters; assigning or deleting an attribute afterwards fails as on a frozen dataclass.
    ``copy``, ``deepcopy`` and ``pickle`` get and restore the slots' values in order.
    """

    __slots__ = ()
    #: the names of the fields, in order (a generated record sets its own)
    __match_args__: ClassVar[tuple[str, ...]] = ()

    def __setattr__(self, name: str, value: object) -> None:
        _frozen("assign to", name)

    def __delattr__(self, name: str) -> None:
        _frozen("delete", name)

    def __getstate__(self) -> list[Any]:
        return [getattr(self, name) for name in _slots(type(self))]

    def __setstate__(self, state: list[Any]) -> None:
        for name, value in zip(_slots(type(self)), state, strict=False):
            object.__setattr__(self, name, value)


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
            self.__dict__.update(zip(names, values, strict=True))
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
