"""The invokers of a world's tools: what a call costs besides the tool's own work.

:mod:`worldspec.runtime.arguments` declares how each argument loads; this module makes, once
per tool, the function that runs a call: ``invoke(episode, arguments)``. It is on the path of
every call, so it is made of closures for the tool's number of parameters, each written out
(no list built, no star call, no loop), rather than of one general function:

- :func:`slot_invoker`, for a tool whose parameters are all required (the common case): each
  argument is read by its name and, where it is text (a text parameter, a row's text key),
  checked inline (ASCII text as it is: no call at all); a row by a text key is looked up
  inline; anything else goes to its slot's loader ``load(episode, value)``;
- :func:`getter_invoker`, for any tool: one ``get(episode, arguments)`` per parameter (a
  default, an optional argument, the spec's own message).

Either catches ``failures`` around the call: in ``arguments: dynamic`` what Python raises on
a value of another type than declared (:data:`~worldspec.runtime.helpers.PYTHON_FAILURES`)
becomes the call's failure with Python's text; otherwise ``()``, which catches nothing (a
``try`` costs nothing where nothing is raised).

:func:`slot_invoker` checks the arguments' names itself (their count, then the reads of
its names, which it makes anyway: no set compared, no call); :func:`checked_arguments` puts
that check before a getter invoker.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from worldspec.runtime.helpers import check_arguments, check_arguments_python, python_failure

__all__ = ["Invoke", "Getter", "SlotLoad", "Check", "slot_invoker", "getter_invoker",
           "names_check", "checked_arguments", "MOST_SLOTS"]

#: ``invoke(episode, arguments) -> result``
Invoke = Callable[[Any, Mapping[str, Any]], Any]
#: ``get(episode, arguments) -> the argument's value``, one parameter's loader
Getter = Callable[[Any, Mapping[str, Any]], Any]
#: ``load(episode, value) -> the argument's value``, a required parameter's loader
SlotLoad = Callable[[Any, Any], Any]
#: ``check(arguments)``: raises the failure that says what is wrong with their names
Check = Callable[[Mapping[str, Any]], None]
Failures = tuple[type[BaseException], ...]


def slot_invoker(method: Callable[..., Any], names: tuple[str, ...], texts: tuple[bool, ...],
                 tables: tuple[str | None, ...], loads: tuple[SlotLoad, ...], check: Check,
                 nulls: bool, failures: Failures) -> Invoke:
    """``invoke`` for a tool whose ``names`` are all required, with the check of the
    arguments' names (a call of exactly ``names``, none null where ``nulls``, costs a count
    and the reads of the names, all made before any argument is loaded: as many arguments as
    names, each found, are exactly ``names``; any other call goes through ``check``, which
    says what is wrong). Slot ``i`` takes
    ``arguments[names[i]]`` as it is where ``texts[i]`` and it is ASCII text, or the row of
    ``tables[i]`` of that key where a table is named and it has one; otherwise (another
    value, no such row) ``loads[i](episode, value)`` (at most :data:`MOST_SLOTS` slots)."""
    return _SLOTS[len(names) - 1](method, names, texts, tables, loads, check, nulls, failures)


def getter_invoker(method: Callable[..., Any], getters: tuple[Getter, ...],
                   failures: Failures) -> Invoke:
    """``invoke`` calling ``method(episode, *(get(episode, arguments) for get in getters))``."""
    if len(getters) < len(_GETTERS):
        return _GETTERS[len(getters)](method, getters, failures)

    def call(ep: Any, args: Mapping[str, Any]) -> Any:
        try:
            return method(ep, *[get(ep, args) for get in getters])
        except failures as exc:
            raise python_failure(exc) from None
    return call


# ------------------------------------------------------------------------ slot invokers
# One closure per number of slots; slot i reads its argument, keeps ASCII text as it is
# (``t<i>``), looks a row up by it (``r<i>``: the table), and calls its loader otherwise.
def _slots_one(method: Callable[..., Any], names: tuple[str, ...],
               texts: tuple[bool, ...], tables: tuple[str | None, ...],
               loads: tuple[SlotLoad, ...], check: Check, nulls: bool,
               failures: Failures) -> Invoke:
    (n0,) = names
    (t0,) = texts
    (r0,) = tables
    (g0,) = loads

    def call(ep: Any, args: Mapping[str, Any]) -> Any:
        if len(args) != 1 or (nulls and None in args.values()):
            check(args)
        try:
            a0 = args[n0]
        except KeyError:  # a name that is none of ours in place of one of them
            check(args)
            raise
        try:
            if not t0 or type(a0) is not str or not a0.isascii():
                a0 = g0(ep, a0)
            elif r0 is not None:
                a0 = ep.tables[r0].rows.get(a0) or g0(ep, a0)
            return method(ep, a0)
        except failures as exc:
            raise python_failure(exc) from None
    return call


def _slots_two(method: Callable[..., Any], names: tuple[str, ...],
               texts: tuple[bool, ...], tables: tuple[str | None, ...],
               loads: tuple[SlotLoad, ...], check: Check, nulls: bool,
               failures: Failures) -> Invoke:
    n0, n1 = names
    t0, t1 = texts
    r0, r1 = tables
    g0, g1 = loads

    def call(ep: Any, args: Mapping[str, Any]) -> Any:
        if len(args) != 2 or (nulls and None in args.values()):
            check(args)
        try:
            a0 = args[n0]
            a1 = args[n1]
        except KeyError:  # a name that is none of ours in place of one of them
            check(args)
            raise
        try:
            if not t0 or type(a0) is not str or not a0.isascii():
                a0 = g0(ep, a0)
            elif r0 is not None:
                a0 = ep.tables[r0].rows.get(a0) or g0(ep, a0)
            if not t1 or type(a1) is not str or not a1.isascii():
                a1 = g1(ep, a1)
            elif r1 is not None:
                a1 = ep.tables[r1].rows.get(a1) or g1(ep, a1)
            return method(ep, a0, a1)
        except failures as exc:
            raise python_failure(exc) from None
    return call


def _slots_three(method: Callable[..., Any], names: tuple[str, ...],
                 texts: tuple[bool, ...], tables: tuple[str | None, ...],
                 loads: tuple[SlotLoad, ...], check: Check, nulls: bool,
                 failures: Failures) -> Invoke:
    n0, n1, n2 = names
    t0, t1, t2 = texts
    r0, r1, r2 = tables
    g0, g1, g2 = loads

    def call(ep: Any, args: Mapping[str, Any]) -> Any:
        if len(args) != 3 or (nulls and None in args.values()):
            check(args)
        try:
            a0 = args[n0]
            a1 = args[n1]
            a2 = args[n2]
        except KeyError:  # a name that is none of ours in place of one of them
            check(args)
            raise
        try:
            if not t0 or type(a0) is not str or not a0.isascii():
                a0 = g0(ep, a0)
            elif r0 is not None:
                a0 = ep.tables[r0].rows.get(a0) or g0(ep, a0)
            if not t1 or type(a1) is not str or not a1.isascii():
                a1 = g1(ep, a1)
            elif r1 is not None:
                a1 = ep.tables[r1].rows.get(a1) or g1(ep, a1)
            if not t2 or type(a2) is not str or not a2.isascii():
                a2 = g2(ep, a2)
            elif r2 is not None:
                a2 = ep.tables[r2].rows.get(a2) or g2(ep, a2)
            return method(ep, a0, a1, a2)
        except failures as exc:
            raise python_failure(exc) from None
    return call


def _slots_four(method: Callable[..., Any], names: tuple[str, ...],
                texts: tuple[bool, ...], tables: tuple[str | None, ...],
                loads: tuple[SlotLoad, ...], check: Check, nulls: bool,
                failures: Failures) -> Invoke:
    n0, n1, n2, n3 = names
    t0, t1, t2, t3 = texts
    r0, r1, r2, r3 = tables
    g0, g1, g2, g3 = loads

    def call(ep: Any, args: Mapping[str, Any]) -> Any:
        if len(args) != 4 or (nulls and None in args.values()):
            check(args)
        try:
            a0 = args[n0]
            a1 = args[n1]
            a2 = args[n2]
            a3 = args[n3]
        except KeyError:  # a name that is none of ours in place of one of them
            check(args)
            raise
        try:
            if not t0 or type(a0) is not str or not a0.isascii():
                a0 = g0(ep, a0)
            elif r0 is not None:
                a0 = ep.tables[r0].rows.get(a0) or g0(ep, a0)
            if not t1 or type(a1) is not str or not a1.isascii():
                a1 = g1(ep, a1)
            elif r1 is not None:
                a1 = ep.tables[r1].rows.get(a1) or g1(ep, a1)
            if not t2 or type(a2) is not str or not a2.isascii():
                a2 = g2(ep, a2)
            elif r2 is not None:
                a2 = ep.tables[r2].rows.get(a2) or g2(ep, a2)
            if not t3 or type(a3) is not str or not a3.isascii():
                a3 = g3(ep, a3)
            elif r3 is not None:
                a3 = ep.tables[r3].rows.get(a3) or g3(ep, a3)
            return method(ep, a0, a1, a2, a3)
        except failures as exc:
            raise python_failure(exc) from None
    return call


def _slots_five(method: Callable[..., Any], names: tuple[str, ...],
                texts: tuple[bool, ...], tables: tuple[str | None, ...],
                loads: tuple[SlotLoad, ...], check: Check, nulls: bool,
                failures: Failures) -> Invoke:
    n0, n1, n2, n3, n4 = names
    t0, t1, t2, t3, t4 = texts
    r0, r1, r2, r3, r4 = tables
    g0, g1, g2, g3, g4 = loads

    def call(ep: Any, args: Mapping[str, Any]) -> Any:
        if len(args) != 5 or (nulls and None in args.values()):
            check(args)
        try:
            a0 = args[n0]
            a1 = args[n1]
            a2 = args[n2]
            a3 = args[n3]
            a4 = args[n4]
        except KeyError:  # a name that is none of ours in place of one of them
            check(args)
            raise
        try:
            if not t0 or type(a0) is not str or not a0.isascii():
                a0 = g0(ep, a0)
            elif r0 is not None:
                a0 = ep.tables[r0].rows.get(a0) or g0(ep, a0)
            if not t1 or type(a1) is not str or not a1.isascii():
                a1 = g1(ep, a1)
            elif r1 is not None:
                a1 = ep.tables[r1].rows.get(a1) or g1(ep, a1)
            if not t2 or type(a2) is not str or not a2.isascii():
                a2 = g2(ep, a2)
            elif r2 is not None:
                a2 = ep.tables[r2].rows.get(a2) or g2(ep, a2)
            if not t3 or type(a3) is not str or not a3.isascii():
                a3 = g3(ep, a3)
            elif r3 is not None:
                a3 = ep.tables[r3].rows.get(a3) or g3(ep, a3)
            if not t4 or type(a4) is not str or not a4.isascii():
                a4 = g4(ep, a4)
            elif r4 is not None:
                a4 = ep.tables[r4].rows.get(a4) or g4(ep, a4)
            return method(ep, a0, a1, a2, a3, a4)
        except failures as exc:
            raise python_failure(exc) from None
    return call


def _slots_six(method: Callable[..., Any], names: tuple[str, ...],
               texts: tuple[bool, ...], tables: tuple[str | None, ...],
               loads: tuple[SlotLoad, ...], check: Check, nulls: bool,
               failures: Failures) -> Invoke:
    n0, n1, n2, n3, n4, n5 = names
    t0, t1, t2, t3, t4, t5 = texts
    r0, r1, r2, r3, r4, r5 = tables
    g0, g1, g2, g3, g4, g5 = loads

    def call(ep: Any, args: Mapping[str, Any]) -> Any:
        if len(args) != 6 or (nulls and None in args.values()):
            check(args)
        try:
            a0 = args[n0]
            a1 = args[n1]
            a2 = args[n2]
            a3 = args[n3]
            a4 = args[n4]
            a5 = args[n5]
        except KeyError:  # a name that is none of ours in place of one of them
            check(args)
            raise
        try:
            if not t0 or type(a0) is not str or not a0.isascii():
                a0 = g0(ep, a0)
            elif r0 is not None:
                a0 = ep.tables[r0].rows.get(a0) or g0(ep, a0)
            if not t1 or type(a1) is not str or not a1.isascii():
                a1 = g1(ep, a1)
            elif r1 is not None:
                a1 = ep.tables[r1].rows.get(a1) or g1(ep, a1)
            if not t2 or type(a2) is not str or not a2.isascii():
                a2 = g2(ep, a2)
            elif r2 is not None:
                a2 = ep.tables[r2].rows.get(a2) or g2(ep, a2)
            if not t3 or type(a3) is not str or not a3.isascii():
                a3 = g3(ep, a3)
            elif r3 is not None:
                a3 = ep.tables[r3].rows.get(a3) or g3(ep, a3)
            if not t4 or type(a4) is not str or not a4.isascii():
                a4 = g4(ep, a4)
            elif r4 is not None:
                a4 = ep.tables[r4].rows.get(a4) or g4(ep, a4)
            if not t5 or type(a5) is not str or not a5.isascii():
                a5 = g5(ep, a5)
            elif r5 is not None:
                a5 = ep.tables[r5].rows.get(a5) or g5(ep, a5)
            return method(ep, a0, a1, a2, a3, a4, a5)
        except failures as exc:
            raise python_failure(exc) from None
    return call


def _slots_seven(method: Callable[..., Any], names: tuple[str, ...],
                 texts: tuple[bool, ...], tables: tuple[str | None, ...],
                 loads: tuple[SlotLoad, ...], check: Check, nulls: bool,
                 failures: Failures) -> Invoke:
    n0, n1, n2, n3, n4, n5, n6 = names
    t0, t1, t2, t3, t4, t5, t6 = texts
    r0, r1, r2, r3, r4, r5, r6 = tables
    g0, g1, g2, g3, g4, g5, g6 = loads

    def call(ep: Any, args: Mapping[str, Any]) -> Any:
        if len(args) != 7 or (nulls and None in args.values()):
            check(args)
        try:
            a0 = args[n0]
            a1 = args[n1]
            a2 = args[n2]
            a3 = args[n3]
            a4 = args[n4]
            a5 = args[n5]
            a6 = args[n6]
        except KeyError:  # a name that is none of ours in place of one of them
            check(args)
            raise
        try:
            if not t0 or type(a0) is not str or not a0.isascii():
                a0 = g0(ep, a0)
            elif r0 is not None:
                a0 = ep.tables[r0].rows.get(a0) or g0(ep, a0)
            if not t1 or type(a1) is not str or not a1.isascii():
                a1 = g1(ep, a1)
            elif r1 is not None:
                a1 = ep.tables[r1].rows.get(a1) or g1(ep, a1)
            if not t2 or type(a2) is not str or not a2.isascii():
                a2 = g2(ep, a2)
            elif r2 is not None:
                a2 = ep.tables[r2].rows.get(a2) or g2(ep, a2)
            if not t3 or type(a3) is not str or not a3.isascii():
                a3 = g3(ep, a3)
            elif r3 is not None:
                a3 = ep.tables[r3].rows.get(a3) or g3(ep, a3)
            if not t4 or type(a4) is not str or not a4.isascii():
                a4 = g4(ep, a4)
            elif r4 is not None:
                a4 = ep.tables[r4].rows.get(a4) or g4(ep, a4)
            if not t5 or type(a5) is not str or not a5.isascii():
                a5 = g5(ep, a5)
            elif r5 is not None:
                a5 = ep.tables[r5].rows.get(a5) or g5(ep, a5)
            if not t6 or type(a6) is not str or not a6.isascii():
                a6 = g6(ep, a6)
            elif r6 is not None:
                a6 = ep.tables[r6].rows.get(a6) or g6(ep, a6)
            return method(ep, a0, a1, a2, a3, a4, a5, a6)
        except failures as exc:
            raise python_failure(exc) from None
    return call


def _slots_eight(method: Callable[..., Any], names: tuple[str, ...],
                 texts: tuple[bool, ...], tables: tuple[str | None, ...],
                 loads: tuple[SlotLoad, ...], check: Check, nulls: bool,
                 failures: Failures) -> Invoke:
    n0, n1, n2, n3, n4, n5, n6, n7 = names
    t0, t1, t2, t3, t4, t5, t6, t7 = texts
    r0, r1, r2, r3, r4, r5, r6, r7 = tables
    g0, g1, g2, g3, g4, g5, g6, g7 = loads

    def call(ep: Any, args: Mapping[str, Any]) -> Any:
        if len(args) != 8 or (nulls and None in args.values()):
            check(args)
        try:
            a0 = args[n0]
            a1 = args[n1]
            a2 = args[n2]
            a3 = args[n3]
            a4 = args[n4]
            a5 = args[n5]
            a6 = args[n6]
            a7 = args[n7]
        except KeyError:  # a name that is none of ours in place of one of them
            check(args)
            raise
        try:
            if not t0 or type(a0) is not str or not a0.isascii():
                a0 = g0(ep, a0)
            elif r0 is not None:
                a0 = ep.tables[r0].rows.get(a0) or g0(ep, a0)
            if not t1 or type(a1) is not str or not a1.isascii():
                a1 = g1(ep, a1)
            elif r1 is not None:
                a1 = ep.tables[r1].rows.get(a1) or g1(ep, a1)
            if not t2 or type(a2) is not str or not a2.isascii():
                a2 = g2(ep, a2)
            elif r2 is not None:
                a2 = ep.tables[r2].rows.get(a2) or g2(ep, a2)
            if not t3 or type(a3) is not str or not a3.isascii():
                a3 = g3(ep, a3)
            elif r3 is not None:
                a3 = ep.tables[r3].rows.get(a3) or g3(ep, a3)
            if not t4 or type(a4) is not str or not a4.isascii():
                a4 = g4(ep, a4)
            elif r4 is not None:
                a4 = ep.tables[r4].rows.get(a4) or g4(ep, a4)
            if not t5 or type(a5) is not str or not a5.isascii():
                a5 = g5(ep, a5)
            elif r5 is not None:
                a5 = ep.tables[r5].rows.get(a5) or g5(ep, a5)
            if not t6 or type(a6) is not str or not a6.isascii():
                a6 = g6(ep, a6)
            elif r6 is not None:
                a6 = ep.tables[r6].rows.get(a6) or g6(ep, a6)
            if not t7 or type(a7) is not str or not a7.isascii():
                a7 = g7(ep, a7)
            elif r7 is not None:
                a7 = ep.tables[r7].rows.get(a7) or g7(ep, a7)
            return method(ep, a0, a1, a2, a3, a4, a5, a6, a7)
        except failures as exc:
            raise python_failure(exc) from None
    return call


_SLOTS: Final[tuple[Callable[..., Invoke], ...]] = (
    _slots_one, _slots_two, _slots_three, _slots_four, _slots_five, _slots_six, _slots_seven,
    _slots_eight)
#: the most parameters :func:`slot_invoker` takes
MOST_SLOTS: Final = len(_SLOTS)


# ---------------------------------------------------------------------- getter invokers
def _get_none(method: Callable[..., Any], getters: tuple[Getter, ...],
              failures: Failures) -> Invoke:
    def call(ep: Any, args: Mapping[str, Any]) -> Any:
        try:
            return method(ep)
        except failures as exc:
            raise python_failure(exc) from None
    return call


def _get_one(method: Callable[..., Any], getters: tuple[Getter, ...],
             failures: Failures) -> Invoke:
    (g0,) = getters

    def call(ep: Any, args: Mapping[str, Any]) -> Any:
        try:
            return method(ep, g0(ep, args))
        except failures as exc:
            raise python_failure(exc) from None
    return call


def _get_two(method: Callable[..., Any], getters: tuple[Getter, ...],
             failures: Failures) -> Invoke:
    g0, g1 = getters

    def call(ep: Any, args: Mapping[str, Any]) -> Any:
        try:
            return method(ep, g0(ep, args), g1(ep, args))
        except failures as exc:
            raise python_failure(exc) from None
    return call


def _get_three(method: Callable[..., Any], getters: tuple[Getter, ...],
               failures: Failures) -> Invoke:
    g0, g1, g2 = getters

    def call(ep: Any, args: Mapping[str, Any]) -> Any:
        try:
            return method(ep, g0(ep, args), g1(ep, args), g2(ep, args))
        except failures as exc:
            raise python_failure(exc) from None
    return call


def _get_four(method: Callable[..., Any], getters: tuple[Getter, ...],
              failures: Failures) -> Invoke:
    g0, g1, g2, g3 = getters

    def call(ep: Any, args: Mapping[str, Any]) -> Any:
        try:
            return method(ep, g0(ep, args), g1(ep, args), g2(ep, args), g3(ep, args))
        except failures as exc:
            raise python_failure(exc) from None
    return call


def _get_five(method: Callable[..., Any], getters: tuple[Getter, ...],
              failures: Failures) -> Invoke:
    g0, g1, g2, g3, g4 = getters

    def call(ep: Any, args: Mapping[str, Any]) -> Any:
        try:
            return method(ep, g0(ep, args), g1(ep, args), g2(ep, args), g3(ep, args), g4(ep, args))
        except failures as exc:
            raise python_failure(exc) from None
    return call


def _get_six(method: Callable[..., Any], getters: tuple[Getter, ...],
             failures: Failures) -> Invoke:
    g0, g1, g2, g3, g4, g5 = getters

    def call(ep: Any, args: Mapping[str, Any]) -> Any:
        try:
            return method(ep, g0(ep, args), g1(ep, args), g2(ep, args), g3(ep, args), g4(ep, args),
                          g5(ep, args))
        except failures as exc:
            raise python_failure(exc) from None
    return call


def _get_seven(method: Callable[..., Any], getters: tuple[Getter, ...],
               failures: Failures) -> Invoke:
    g0, g1, g2, g3, g4, g5, g6 = getters

    def call(ep: Any, args: Mapping[str, Any]) -> Any:
        try:
            return method(ep, g0(ep, args), g1(ep, args), g2(ep, args), g3(ep, args), g4(ep, args),
                          g5(ep, args), g6(ep, args))
        except failures as exc:
            raise python_failure(exc) from None
    return call


def _get_eight(method: Callable[..., Any], getters: tuple[Getter, ...],
               failures: Failures) -> Invoke:
    g0, g1, g2, g3, g4, g5, g6, g7 = getters

    def call(ep: Any, args: Mapping[str, Any]) -> Any:
        try:
            return method(ep, g0(ep, args), g1(ep, args), g2(ep, args), g3(ep, args), g4(ep, args),
                          g5(ep, args), g6(ep, args), g7(ep, args))
        except failures as exc:
            raise python_failure(exc) from None
    return call


_GETTERS: Final[tuple[Callable[..., Invoke], ...]] = (
    _get_none, _get_one, _get_two, _get_three, _get_four, _get_five, _get_six, _get_seven,
    _get_eight)


def names_check(allowed: tuple[str, ...], required: tuple[str, ...], *,
                nullable: tuple[str, ...] = (), python_name: str | None = None
                ) -> tuple[Check, bool]:
    """The check that says what is wrong with a call's argument names (only ``allowed``
    ones, every ``required`` one, and but with Python's rules, no null for a required one
    but ``nullable`` ones; errors naming ``python_name`` with Python's rules), and whether a
    null counts as missing (so that a call with a null must go through the check)."""
    if python_name is not None:
        function = python_name

        def check(args: Mapping[str, Any]) -> None:
            check_arguments_python(args, allowed, required, function)
    else:
        def check(args: Mapping[str, Any]) -> None:
            check_arguments(args, allowed, required, nullable)
    return check, python_name is None and bool(required)


def checked_arguments(invoke: Invoke, allowed: tuple[str, ...], required: tuple[str, ...], *,
                      nullable: tuple[str, ...] = (), python_name: str | None = None
                      ) -> Invoke:
    """``invoke`` behind the check of the arguments' names (see :func:`names_check`): a call
    whose names fit exactly costs one set comparison; any other call gets the check that
    says what is wrong."""
    slow, nulls = names_check(allowed, required, nullable=nullable, python_name=python_name)
    names, needed = frozenset(allowed), frozenset(required)
    if names == needed and nulls:
        def exact_no_null(ep: Any, args: Mapping[str, Any]) -> Any:
            if not (args.keys() == names and None not in args.values()):
                slow(args)
            return invoke(ep, args)
        return exact_no_null
    if names == needed:
        def exact(ep: Any, args: Mapping[str, Any]) -> Any:
            if not args.keys() == names:
                slow(args)
            return invoke(ep, args)
        return exact
    if nulls:
        def within_no_null(ep: Any, args: Mapping[str, Any]) -> Any:
            if not (names >= args.keys() >= needed and None not in args.values()):
                slow(args)
            return invoke(ep, args)
        return within_no_null

    def within(ep: Any, args: Mapping[str, Any]) -> Any:
        if not names >= args.keys() >= needed:
            slow(args)
        return invoke(ep, args)
    return within
