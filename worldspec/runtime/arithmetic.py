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

Where Python would work longer than a call may, or run out of memory, the guards fail first,
each judged from the operands' sizes *before* the work is done: the text has at most
:data:`MAX_LENGTH` characters; no int of the evaluation could have more than :data:`MAX_BITS`
bits (so ``9**9**9`` fails at once); no tuple more than :data:`MAX_TUPLE` elements; and each
step draws one step from the call's budget, and each operation on big ints (or tuples) draws
its estimated time besides, one step per :data:`NS_PER_STEP` ns (the cost model below), so a
call's work stays bounded (about 25 ms for the whole budget). :func:`arithmetic_float` is
``float(arithmetic(text))`` in one, so an int value too large to be a value of the language
fails with Python's ``int too large to convert to float``, as ``float(eval(text))`` does.
Python's own limits stay Python's: a literal of more than 4,300 digits, or a tree nested
deeper than its parser or compiler allows, fails with CPython's text (``maximum recursion
depth exceeded during compilation``, as ``eval`` says it).
"""

from __future__ import annotations

import math
import operator
import re
import sys
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

from worldspec.runtime.budget import out_of_steps
from worldspec.runtime.errors import LimitError, ToolError

if TYPE_CHECKING:
    import ast  # at run time imported by the first parse: a world's import goes without it

    from worldspec.runtime.episode import Episode

__all__ = ["arithmetic", "arithmetic_float", "MAX_LENGTH", "MAX_BITS", "MAX_TUPLE", "MAX_DIGITS",
           "NS_PER_STEP", "LENGTH_MESSAGE", "BITS_MESSAGE", "TUPLE_MESSAGE", "DIGITS_MESSAGE"]

#: the longest text evaluated (characters)
MAX_LENGTH = 20_000
#: the most bits an int of the evaluation may have (1 MiB): judged from the operands' sizes,
#: before computing
MAX_BITS = 1 << 23
#: the most elements a tuple of the evaluation may have (8 MB of references)
MAX_TUPLE = 1_000_000
#: the most digits an int result may have: Python's limit for writing an int as text (what
#: ``number(text)`` reads), so the value can be stored, hashed and sent like any other
MAX_DIGITS = 4300
#: the cost model: the work an operation on big ints (or a tuple) will do is estimated in
#: nanoseconds of CPython 3.11 from its operands' sizes in 30-bit digits, and drawn from the
#: call's step budget, one step per NS_PER_STEP, before it is done; so the whole budget
#: (1,000,000 steps) is about 25 ms of work. Each estimate is at or above the time measured
#: (``scripts/arithmetic_cost.py`` measures the ratio).
NS_PER_STEP = 25
#: ns per digit of a linear operation (+, -, unary, a conversion to float, copying): what
#: writing the result costs, so the memory a call fills is bounded too (about 25 MB)
_LINEAR = 4.0
#: digit-by-digit multiplication, per pair of digits, when the shorter has at most
#: _KARATSUBA digits
_SCHOOL = 2.0
_KARATSUBA = 70
#: Karatsuba multiplication of two m-digit ints: _KARATSUBA_NS * m ** 1.585
_KARATSUBA_NS = 12.0
#: long division of n by m digits, per (n - m + 1) * m
_DIVISION = 3.0
#: a power of a power of two (its squarings are of sparse ints), per digit of the result
_SPARSE_POW = 300.0
#: a power of 0, 1 or -1, per bit of the exponent
_POW_BIT = 24.0
#: parsing the text into a tree and the tree into steps, per token (a number, a name or
#: another character)
_PARSE = 4000.0
_TOKENS = re.compile(r"[0-9A-Za-z_.]+|\S")
#: per element of a tuple built or copied
_ELEMENT = 24.0

LENGTH_MESSAGE = f"The expression is longer than {MAX_LENGTH:,} characters."
BITS_MESSAGE = f"An integer in the expression would have more than {MAX_BITS:,} bits."
TUPLE_MESSAGE = f"A tuple in the expression would have more than {MAX_TUPLE:,} elements."
DIGITS_MESSAGE = (f"The expression's value is an integer of more than {MAX_DIGITS:,} digits "
                  "(Python's limit for writing one as text).")

#: text the parser can read without any warning (digits, operators, brackets, blanks)
_PLAIN = re.compile(r"[0-9+\-*/%().,~ \t\r\n]*")

# the tables below are keyed by the name of the node's class (``ast`` is imported only
# when a text is parsed)
_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "Add": operator.add, "Sub": operator.sub, "Mult": operator.mul,
    "Div": operator.truediv, "FloorDiv": operator.floordiv, "Mod": operator.mod,
    "Pow": operator.pow,
}
_UNARY: dict[str, Callable[[Any], Any]] = {
    "UAdd": operator.pos, "USub": operator.neg, "Invert": operator.invert,
}
_OPERATORS = {"LShift": "<<", "RShift": ">>", "BitOr": "|", "BitXor": "^",
              "BitAnd": "&", "MatMult": "@", "Not": "not"}
#: what a refused node is called in the message
_KINDS = {
    "Compare": "a comparison", "BoolOp": "'and'/'or'", "IfExp": "a conditional expression",
    "List": "a list", "Dict": "a dict", "Set": "a set", "Subscript": "a subscript",
    "Attribute": "an attribute", "Lambda": "a lambda", "ListComp": "a comprehension",
    "SetComp": "a comprehension", "DictComp": "a comprehension",
    "GeneratorExp": "a generator expression", "JoinedStr": "an f-string",
    "NamedExpr": "an assignment expression", "Slice": "a slice", "Await": "'await'",
    "Yield": "'yield'", "YieldFrom": "'yield from'",
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
    value = _evaluate(ep, text)
    if type(value) is int:
        if value.bit_length() > 3 * MAX_DIGITS and abs(value) >= 10 ** MAX_DIGITS:
            raise LimitError(DIGITS_MESSAGE)  # it could not be written, stored or hashed
        exact: int = value
        return exact
    return _real(value)


def arithmetic_float(ep: Episode | None, text: str) -> float:
    """``float(arithmetic(text))``, as Python's ``float(eval(text))``: the int value is
    converted where it is computed, so one of more than :data:`MAX_DIGITS` digits (which
    could not be a value of the language) fails with Python's ``int too large to convert
    to float``, as every int past the float range does."""
    value = _evaluate(ep, text)
    try:
        return float(_real(value))
    except OverflowError as exc:
        raise ToolError(str(exc)) from None


def _real(value: Any) -> int | float:
    """``value`` when it is an int or a float; otherwise what Python's ``float()`` says."""
    if type(value) is int or type(value) is float:
        result: int | float = value
        return result
    try:
        float(value)  # what Python's float() says of a complex, a tuple, an Ellipsis
    except TypeError as exc:
        raise ToolError(str(exc)) from None
    raise ToolError(f"float() argument must be a string or a real number, not "
                    f"'{type(value).__name__}'")


def _evaluate(ep: Episode | None, text: str) -> Any:
    """The value of ``text``, whatever its type."""
    import ast

    if len(text) > MAX_LENGTH:
        raise LimitError(LENGTH_MESSAGE)
    source = text.lstrip(" \t")  # as eval() does before parsing
    if ep is not None:  # parsing a long text takes time too: charged before it is done
        ep._steps -= int(_PARSE * len(_TOKENS.findall(source)) / NS_PER_STEP)
        if ep._steps < 0:
            _too_long_to_parse(source)
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
        return _run(ep, program)
    except (ArithmeticError, TypeError, ValueError, MemoryError) as exc:
        raise ToolError(str(exc)) from None


def _too_long_to_parse(source: str) -> NoReturn:
    """A text whose tree would take longer to build than the call has left: it fails as
    the call's budget says, unless Python's own compiler refuses it first, as ``eval``
    would (``compile`` is eval's first half, quicker than building the tree, and runs
    nothing: its code is dropped), so a long text that is no expression keeps Python's
    text (a chain of 10,000 signs: ``eval`` fails with an empty message)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(source, "<string>", "eval", dont_inherit=True)
        except RecursionError as exc:
            raise LimitError(str(exc)) from None
        except (SyntaxError, ValueError, MemoryError, UnicodeError) as exc:
            raise ToolError(str(exc)) from None
    out_of_steps()


# ---------------------------------------------------------------- the tree as steps
def _compile(root: ast.expr) -> list[Step]:
    """The steps that evaluate ``root``, in CPython's order of evaluation (without
    recursion: ``work`` holds the nodes still to visit and the steps to emit after them)."""
    import ast

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
            what = _KINDS.get(kind.__name__, f"a {kind.__name__} expression")
            raise ToolError(f"{what} is not arithmetic: the expression may hold {_ALLOWED}")
    return program


def _constant(value: object) -> str:
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, str):
        return "a string"
    return "a bytes literal" if isinstance(value, bytes) else type(value).__name__


def _operator(table: dict[str, Callable[..., Any]], op: ast.AST) -> Callable[..., Any]:
    name = type(op).__name__
    fn = table.get(name)
    if fn is None:
        raise ToolError(f"the operator '{_OPERATORS.get(name, name)}' is "
                        f"not arithmetic: the expression may hold {_ALLOWED}")
    return fn


def _unpacked(elts: list[ast.expr]) -> list[ast.AST | Step]:
    """A tuple of ``elts`` as CPython builds it: all at once, or, when an element is
    starred, a list extended element by element (so ``*3`` fails where it stands)."""
    import ast

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
    import ast

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
            operand = stack[-1]
            if type(operand) is int:
                if arg is operator.invert and operand.bit_length() >= MAX_BITS:
                    raise LimitError(BITS_MESSAGE)  # ~x could have one bit more
                _charge(ep, _LINEAR * _digits(operand))
            stack[-1] = arg(operand)
        elif code == _TUPLE:
            if arg > MAX_TUPLE:
                raise LimitError(TUPLE_MESSAGE)
            _charge(ep, _ELEMENT * arg)
            items = tuple(stack[len(stack) - arg:])
            del stack[len(stack) - arg:]
            push(items)
        elif code == _LIST:
            if arg > MAX_TUPLE:
                raise LimitError(TUPLE_MESSAGE)
            _charge(ep, _ELEMENT * arg)
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
            _charge(ep, _ELEMENT * len(iterable))
            stack[-1].extend(iterable)
        elif code == _TO_TUPLE:
            _charge(ep, _ELEMENT * len(stack[-1]))
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
        _charge(ep, _cost(op, left, right))
        return op(left, right)
    if kind_left is tuple or kind_right is tuple:
        _check_tuple(ep, op, left, right)
    elif kind_left is int or kind_right is int:  # an int meets a float or a complex
        _charge(ep, _LINEAR * _digits(left if kind_left is int else right))
    return op(left, right)


def _digits(value: int) -> int:
    """How many of CPython's 30-bit digits ``value`` has (at least 1)."""
    return value.bit_length() // 30 + 1


def _mul_ns(n: int, m: int) -> float:
    """The estimated time, in ns, of multiplying ints of ``n`` and ``m`` digits: CPython
    multiplies digit by digit below 70 digits, and by Karatsuba above, in slices of the
    shorter operand's size when the longer one is more than twice as long."""
    if n < m:
        n, m = m, n
    if m <= _KARATSUBA:
        return _SCHOOL * n * m
    slices: int = -(-n // m)
    return slices * _KARATSUBA_NS * math.pow(m, 1.585)


def _cost(op: Callable[[Any, Any], Any], left: int, right: int) -> float:
    """The estimated time, in ns, of ``left op right`` on two ints, judged from the operands'
    sizes before computing; an int result of more than :data:`MAX_BITS` bits is refused."""
    n, m = _digits(left), _digits(right)
    if op is operator.pow:
        if right < 0:  # a float power
            return _LINEAR * (n + m)
        if abs(left) < 2:  # 0, 1, -1 to any power: a round of CPython's loop per bit
            return _LINEAR * (n + m) + _POW_BIT * right.bit_length()
        bits = right * math.log2(abs(left)) if right.bit_length() <= 64 else math.inf
        if bits + 1 > MAX_BITS:  # the result has about bits + 1 bits: not computed
            raise LimitError(BITS_MESSAGE)
        size = int(bits) // 30 + 1
        if left & (left - 1) == 0 or -left & (-left - 1) == 0:  # a power of two: sparse
            return _SPARSE_POW * size
        # squarings up to the result's size (the last one, of half of it, weighs most),
        # and the multiplications by the base
        return 1.5 * _mul_ns(size // 2 + 1, size // 2 + 1) + 2 * _mul_ns(size, n)
    if op is operator.mul:
        if left.bit_length() + right.bit_length() > MAX_BITS:  # it could have that many
            raise LimitError(BITS_MESSAGE)
        return _mul_ns(n, m) + _LINEAR * (n + m)
    if op is operator.floordiv or op is operator.mod:
        if n < m:
            return _LINEAR * (n + m)
        return _DIVISION * (n - m + 1) * m + _LINEAR * (n + m)
    if op is not operator.truediv and max(left.bit_length(), right.bit_length()) >= MAX_BITS:
        raise LimitError(BITS_MESSAGE)  # + or -: the result could have one bit more
    return _LINEAR * (n + m)


def _charge(ep: Episode | None, ns: float) -> None:
    """Draw ``ns`` nanoseconds of work from the call's step budget (before doing it)."""
    if ns >= NS_PER_STEP and ep is not None:
        ep._steps -= int(ns / NS_PER_STEP)
        if ep._steps < 0:
            out_of_steps()


def _check_tuple(ep: Episode | None, op: Callable[[Any, Any], Any], left: Any, right: Any
                 ) -> None:
    """Refuse a tuple ``+`` or ``*`` whose result would pass :data:`MAX_TUPLE` elements, and
    charge the elements it copies. A count that is no index-sized int is left to Python,
    which refuses it at once (``cannot fit 'int' into an index-sized integer``)."""
    if op is operator.add and type(left) is tuple and type(right) is tuple:
        size = len(left) + len(right)
    elif op is operator.mul and type(right) is int and type(left) is tuple and \
            -sys.maxsize - 1 <= right <= sys.maxsize:
        size = len(left) * max(right, 0)
    elif op is operator.mul and type(left) is int and type(right) is tuple and \
            -sys.maxsize - 1 <= left <= sys.maxsize:
        size = len(right) * max(left, 0)
    else:
        return
    if size > MAX_TUPLE:
        raise LimitError(TUPLE_MESSAGE)
    _charge(ep, _ELEMENT * size)
