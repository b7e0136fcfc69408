"""``arithmetic(text)``: a Python arithmetic expression, evaluated as ``eval`` evaluates it.

The text is parsed by the running interpreter's own parser (``ast.parse`` in ``eval`` mode,
after dropping the leading spaces and tabs that ``eval`` drops), so a malformed text fails
with the very text ``eval`` gives (``invalid syntax (<string>, line 1)``, ``'(' was never
closed (<string>, line 1)``, ``invalid syntax (<string>, line 0)`` for an empty one). Nothing
is compiled to code: the tree is turned, iteratively, into a list of steps in the order
CPython's bytecode evaluates it, and the steps are run on a value stack, so a deep tree never
meets Python's recursion limit. Each step applies Python's own operator to Python's own
values (int, float, complex, tuple, ``...``), so every value and every exception text is
CPython's: ``division by zero``, ``float floor division by zero``, ``(34, 'Numerical result
out of range')``, ``complex exponentiation``, ``0.0 cannot be raised to a negative power``.

What the text may hold: number literals (and ``...``), tuples, the binary operators
``+ - * / // % **``, the unary ``+ - ~``, and calls, which evaluate their callee and arguments
and then fail as Python does (``'int' object is not callable``; ``2 argument after * must be
an iterable, not int``). A name fails as in an empty namespace (``name 'x' is not defined``).
Anything else (a comparison, a string, a shift, a subscript, ...) is refused before anything
is evaluated. The result is an int or a float; another value fails with the text Python's
``float()`` gives for it (``float() argument must be a string or a real number, not
'complex'``), as the result would if it were converted to a float, and an int result has at
most :data:`MAX_DIGITS` digits (Python's limit for writing an int as text: a larger one could
not be stored, hashed or sent).

Where Python would run out of time or memory instead, the guards fail first, each with a
message naming its limit: the text has at most :data:`MAX_LENGTH` characters; no int of the
evaluation has more than :data:`MAX_BITS` bits (``**`` and ``*`` are judged before they are
computed when their operands' sizes already say so, so ``9**9**9`` fails at once); no tuple
has more than :data:`MAX_TUPLE` elements; each step draws one step from the call's budget,
and an operation on two big ints draws more (``bits(a) * bits(b) >> 17`` steps, the square
of the result's estimated bits for ``**``), so the work a call can do stays bounded.
Python's own limits stay Python's: a literal of more than 4,300 digits, or a tree nested
deeper than its parser or compiler allows, fails with CPython's text (``maximum recursion
depth exceeded during compilation``, as ``eval`` says it).
"""

from __future__ import annotations

import ast
import math
import operator
import re
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from worldspec.runtime.budget import out_of_steps
from worldspec.runtime.errors import LimitError, ToolError

if TYPE_CHECKING:
    from worldspec.runtime.episode import Episode

__all__ = ["arithmetic", "MAX_LENGTH", "MAX_BITS", "MAX_TUPLE", "MAX_DIGITS", "LENGTH_MESSAGE",
           "BITS_MESSAGE", "TUPLE_MESSAGE", "DIGITS_MESSAGE"]

#: the longest text evaluated (characters)
MAX_LENGTH = 20_000
#: the most bits an int of the evaluation may have
MAX_BITS = 65_536
#: the most elements a tuple of the evaluation may have
MAX_TUPLE = 10_000
#: the most digits an int result may have: Python's limit for writing an int as text (what
#: ``number(text)`` reads), so the value can be stored, hashed and sent like any other
MAX_DIGITS = 4300
#: an operation on two ints of a and b bits draws ``a * b >> _BIG`` steps besides its own
_BIG = 17

LENGTH_MESSAGE = f"The expression is longer than {MAX_LENGTH:,} characters."
BITS_MESSAGE = f"An integer in the expression would have more than {MAX_BITS:,} bits."
TUPLE_MESSAGE = f"A tuple in the expression would have more than {MAX_TUPLE:,} elements."
DIGITS_MESSAGE = (f"The expression's value is an integer of more than {MAX_DIGITS:,} digits "
                  "(Python's limit for writing one as text).")

#: text the parser can read without any warning (digits, operators, brackets, blanks)
_PLAIN = re.compile(r"[0-9+\-*/%().,~ \t\r\n]*")

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.UAdd: operator.pos, ast.USub: operator.neg, ast.Invert: operator.invert,
}
_OPERATORS = {ast.LShift: "<<", ast.RShift: ">>", ast.BitOr: "|", ast.BitXor: "^",
              ast.BitAnd: "&", ast.MatMult: "@", ast.Not: "not"}
#: what a refused node is called in the message
_KINDS = {
    ast.Compare: "a comparison", ast.BoolOp: "'and'/'or'", ast.IfExp: "a conditional expression",
    ast.List: "a list", ast.Dict: "a dict", ast.Set: "a set", ast.Subscript: "a subscript",
    ast.Attribute: "an attribute", ast.Lambda: "a lambda", ast.ListComp: "a comprehension",
    ast.SetComp: "a comprehension", ast.DictComp: "a comprehension",
    ast.GeneratorExp: "a generator expression", ast.JoinedStr: "an f-string",
    ast.NamedExpr: "an assignment expression", ast.Slice: "a slice", ast.Await: "'await'",
    ast.Yield: "'yield'", ast.YieldFrom: "'yield from'",
}
_ALLOWED = "numbers, tuples, + - * / // % **, unary + - ~ and parentheses"

# step codes: (code, argument) pairs, run in order on a value stack
_CONST, _NAME, _UNARY_OP, _BINARY_OP, _TUPLE, _LIST, _APPEND, _EXTEND, _TO_TUPLE, _POP, \
    _MERGE, _CALL, _CALL_EX = range(13)

Step = tuple[int, Any]


def arithmetic(ep: Episode | None, text: str) -> int | float:
    """``arithmetic(text)``: the value of the Python expression ``text``, as ``eval(text)``
    computes it (see the module's text for what it allows and its guards); a failure is a
    :class:`ToolError` with the text of Python's exception."""
    if len(text) > MAX_LENGTH:
        raise LimitError(LENGTH_MESSAGE)
    source = text.lstrip(" \t")  # as eval() does before parsing
    try:
        if _PLAIN.fullmatch(source):
            tree = ast.parse(source, "<string>", "eval")
        else:  # a warning the parser may give must not depend on the host's filters
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(source, "<string>", "eval")
    except RecursionError:
        # the parser's tree is too deep to build: eval() fails compiling it, with this text
        raise LimitError("maximum recursion depth exceeded during compilation") from None
    except (SyntaxError, ValueError, MemoryError, UnicodeError) as exc:
        raise ToolError(str(exc)) from None
    program = _compile(tree.body)
    if ep is not None:
        ep._steps -= len(program)
        if ep._steps < 0:
            out_of_steps()
    try:
        value = _run(ep, program)
    except (ArithmeticError, TypeError, ValueError, MemoryError) as exc:
        raise ToolError(str(exc)) from None
    if type(value) is int:
        if value.bit_length() > 3 * MAX_DIGITS and abs(value) >= 10 ** MAX_DIGITS:
            raise LimitError(DIGITS_MESSAGE)  # it could not be written, stored or hashed
        exact: int = value
        return exact
    if type(value) is float:
        result: float = value
        return result
    try:
        float(value)  # what Python's float() says of a complex, a tuple, an Ellipsis
    except TypeError as exc:
        raise ToolError(str(exc)) from None
    raise ToolError(f"float() argument must be a string or a real number, not "
                    f"'{type(value).__name__}'")


# ---------------------------------------------------------------- the tree as steps
def _compile(root: ast.expr) -> list[Step]:
    """The steps that evaluate ``root``, in CPython's order of evaluation (without
    recursion: ``work`` holds the nodes still to visit and the steps to emit after them)."""
    program: list[Step] = []
    work: list[ast.AST | Step] = [root]
    while work:
        item = work.pop()
        if isinstance(item, tuple):
            program.append(item)
            continue
        kind = type(item)
        if kind is ast.Constant:
            assert isinstance(item, ast.Constant)
            value = item.value
            if type(value) not in (int, float, complex) and value is not Ellipsis:
                raise ToolError(f"{_constant(value)} is not arithmetic: the expression may "
                                f"hold {_ALLOWED}")
            program.append((_CONST, value))
        elif kind is ast.BinOp:
            assert isinstance(item, ast.BinOp)
            work.append((_BINARY_OP, _operator(_BINARY, item.op)))
            work.append(item.right)
            work.append(item.left)
        elif kind is ast.UnaryOp:
            assert isinstance(item, ast.UnaryOp)
            work.append((_UNARY_OP, _operator(_UNARY, item.op)))
            work.append(item.operand)
        elif kind is ast.Tuple:
            assert isinstance(item, ast.Tuple)
            work.extend(reversed(_unpacked(item.elts)))
        elif kind is ast.Call:
            assert isinstance(item, ast.Call)
            work.extend(reversed(_call(item)))
        elif kind is ast.Name:
            assert isinstance(item, ast.Name)
            program.append((_NAME, item.id))
        elif kind is ast.Starred:
            assert isinstance(item, ast.Starred)
            raise ToolError(f"can't use starred expression here (<string>, line {item.lineno})")
        else:
            what = _KINDS.get(kind, f"a {kind.__name__} expression")
            raise ToolError(f"{what} is not arithmetic: the expression may hold {_ALLOWED}")
    return program


def _constant(value: object) -> str:
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, str):
        return "a string"
    return "a bytes literal" if isinstance(value, bytes) else type(value).__name__


def _operator(table: dict[Any, Callable[..., Any]], op: ast.AST) -> Callable[..., Any]:
    fn = table.get(type(op))
    if fn is None:
        raise ToolError(f"the operator '{_OPERATORS.get(type(op), type(op).__name__)}' is "
                        f"not arithmetic: the expression may hold {_ALLOWED}")
    return fn


def _unpacked(elts: list[ast.expr]) -> list[ast.AST | Step]:
    """A tuple of ``elts`` as CPython builds it: all at once, or, when an element is
    starred, a list extended element by element (so ``*3`` fails where it stands)."""
    if not any(type(e) is ast.Starred for e in elts):
        return [*elts, (_TUPLE, len(elts))]
    parts: list[ast.AST | Step] = []
    built = False
    for i, elt in enumerate(elts):
        if isinstance(elt, ast.Starred):
            if not built:
                parts.append((_LIST, i))
                built = True
            parts += [elt.value, (_EXTEND, None)]
        else:
            parts.append(elt)
            if built:
                parts.append((_APPEND, None))
    parts.append((_TO_TUPLE, None))
    return parts


def _call(node: ast.Call) -> list[ast.AST | Step]:
    """A call as CPython 3.11 compiles it: the callee, the arguments, the keyword values,
    then the call, which fails (no value of an expression is callable)."""
    seen: set[str] = set()
    for kw in node.keywords:  # a compile-time error: before anything is evaluated
        if kw.arg is not None:
            if kw.arg in seen:
                raise ToolError(f"keyword argument repeated: {kw.arg} (<string>, line "
                                f"{kw.lineno})")
            seen.add(kw.arg)
    parts: list[ast.AST | Step] = [node.func]
    starred = any(type(a) is ast.Starred for a in node.args)
    if not starred and all(kw.arg is not None for kw in node.keywords):
        parts += node.args
        parts += [kw.value for kw in node.keywords]
        parts.append((_CALL, len(node.args) + len(node.keywords)))
        return parts
    first = node.args[0] if len(node.args) == 1 else None
    if isinstance(first, ast.Starred):
        parts.append(first.value)  # passed on as it is, checked by the call itself
    else:
        parts += _unpacked(node.args)
    for kw in node.keywords:
        parts += [kw.value, (_POP, None) if kw.arg is not None else (_MERGE, None)]
    parts.append((_CALL_EX, None))
    return parts


# ---------------------------------------------------------------- running the steps
def _run(ep: Episode | None, program: list[Step]) -> Any:
    stack: list[Any] = []
    push, pop = stack.append, stack.pop
    for code, arg in program:
        if code == _CONST:
            push(arg)
        elif code == _BINARY_OP:
            right = pop()
            stack[-1] = _binary(ep, arg, stack[-1], right)
        elif code == _UNARY_OP:
            value = arg(stack[-1])
            if type(value) is int and value.bit_length() > MAX_BITS:
                raise LimitError(BITS_MESSAGE)
            stack[-1] = value
        elif code == _TUPLE:
            if arg > MAX_TUPLE:
                raise LimitError(TUPLE_MESSAGE)
            items = tuple(stack[len(stack) - arg:])
            del stack[len(stack) - arg:]
            push(items)
        elif code == _LIST:
            if arg > MAX_TUPLE:
                raise LimitError(TUPLE_MESSAGE)
            items_list = stack[len(stack) - arg:]
            del stack[len(stack) - arg:]
            push(items_list)
        elif code == _APPEND:
            item = pop()
            if len(stack[-1]) >= MAX_TUPLE:
                raise LimitError(TUPLE_MESSAGE)
            stack[-1].append(item)
        elif code == _EXTEND:
            iterable = pop()
            if type(iterable) is not tuple:
                raise TypeError(f"Value after * must be an iterable, not "
                                f"{type(iterable).__name__}")
            if len(stack[-1]) + len(iterable) > MAX_TUPLE:
                raise LimitError(TUPLE_MESSAGE)
            stack[-1].extend(iterable)
        elif code == _TO_TUPLE:
            stack[-1] = tuple(stack[-1])
        elif code == _POP:
            pop()
        elif code == _MERGE:  # no value of an expression is a mapping
            mapping = stack[-1]
            raise TypeError(f"{stack[-3]} argument after ** must be a mapping, not "
                            f"{type(mapping).__name__}")
        elif code == _CALL:
            func = stack[len(stack) - arg - 1]
            raise TypeError(f"'{type(func).__name__}' object is not callable")
        elif code == _CALL_EX:
            func, args = stack[-2], stack[-1]
            if type(args) is not tuple:
                raise TypeError(f"{func} argument after * must be an iterable, not "
                                f"{type(args).__name__}")
            raise TypeError(f"'{type(func).__name__}' object is not callable")
        else:  # _NAME
            raise ToolError(f"name '{arg}' is not defined")
    return stack[0]


def _binary(ep: Episode | None, op: Callable[[Any, Any], Any], left: Any, right: Any) -> Any:
    """``left op right`` by Python's operator, after the guards on ints and tuples."""
    kind_left, kind_right = type(left), type(right)
    if kind_left is int and kind_right is int:
        left_bits, right_bits = left.bit_length(), right.bit_length()
        if op is operator.pow:
            cost = 0
            if right > 0 and left_bits > 1:  # |left| >= 2: the result has about this many bits
                bits = right * math.log2(abs(left)) if right_bits <= 32 else math.inf
                if bits > MAX_BITS + 1:
                    raise LimitError(BITS_MESSAGE)  # certainly too large: not computed
                cost = int(bits) ** 2
        elif op is operator.mul:
            if left_bits + right_bits - 1 > MAX_BITS:
                raise LimitError(BITS_MESSAGE)  # certainly too large: not computed
            cost = left_bits * right_bits
        elif op is operator.add or op is operator.sub:
            cost = 0
        else:
            cost = left_bits * right_bits
        if cost >> _BIG and ep is not None:
            ep._steps -= cost >> _BIG
            if ep._steps < 0:
                out_of_steps()
        value = op(left, right)
        if type(value) is int and value.bit_length() > MAX_BITS:
            raise LimitError(BITS_MESSAGE)
        return value
    if kind_left is tuple or kind_right is tuple:
        _check_tuple(op, left, right)
    return op(left, right)


def _check_tuple(op: Callable[[Any, Any], Any], left: Any, right: Any) -> None:
    """Refuse a tuple ``+`` or ``*`` whose result would pass :data:`MAX_TUPLE` elements."""
    if op is operator.add and type(left) is tuple and type(right) is tuple:
        size = len(left) + len(right)
    elif op is operator.mul and type(right) is int and type(left) is tuple and left:
        size = len(left) * max(right, 0)
    elif op is operator.mul and type(left) is int and type(right) is tuple and right:
        size = len(right) * max(left, 0)
    else:
        return
    if size > MAX_TUPLE:
        raise LimitError(TUPLE_MESSAGE)
