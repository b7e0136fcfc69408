"""Whether a method returns an error after it has changed the object's state, read from its
source (nothing is run).

A *write* is an assignment, augmented assignment or ``del`` whose target is reached from
``self`` (``self.x = ...``, ``self.rows[k]["n"] += 1``), a mutating call on such a value
(``self.log.append(...)``), ``setattr(self, ...)``, or a call of a method of the class that
writes (``self._record(...)``, found by :func:`changing_methods`). A value is *reached from
self* through a local alias too: a name bound to an attribute / subscript chain rooted at
``self`` or at another alias (``rx = self.prescriptions[i]``, ``self.x.get(k)``,
``self.x.setdefault(k, {})``, ``self._find(k)``, ``next(r for r in self.rows if ...)``), a
loop variable over such a container (``for rx in self.x.values()``, ``for k, rx in
self.x.items()``, ``for i, r in enumerate(self.rows)``), or a name assigned together with a
target reached from self (``node = self.entries[n] = Node(n)``).

The analysis follows the paths through the method: ``if``/``elif``/``else``, loops (a change
in one round reaches the next), ``try``/``except``/``finally`` and ``with``. A write in a
branch that ends in ``return`` or ``raise`` does not precede an error returned after that
branch. An error is a returned dict literal with an ``"error"`` key or ``"success": False``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import libcst as cst

__all__ = ["MUTATORS", "changing_methods", "error_after_change"]

#: methods that change the container they are called on
MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update", "add",
                      "discard", "setdefault", "popitem", "sort", "reverse"})
#: calls whose result is part of the container they are called on
_PART_OF = frozenset({"get", "setdefault"})
#: calls whose result holds the elements of the container they are called on
_ELEMENTS_OF = frozenset({"values", "items"})
#: built-in functions whose result holds the elements of their argument
_ELEMENT_FUNCTIONS = frozenset({"enumerate", "reversed", "sorted", "list", "tuple", "iter",
                                "filter"})


def _root(node: cst.BaseExpression) -> cst.BaseExpression:
    """The expression an attribute / subscript / ``.get(...)`` chain starts from."""
    while True:
        if isinstance(node, (cst.Attribute, cst.Subscript)):
            node = node.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and node.func.attr.value in _PART_OF:
            node = node.func.value
        else:
            return node


@dataclass
class _Aliases:
    """The local names of one method that may hold a part of the object's state."""

    names: set[str] = field(default_factory=lambda: {"self"})

    def reaches(self, node: cst.BaseExpression) -> bool:
        """Whether ``node``'s value may be (a part of) the object's state."""
        if isinstance(node, cst.BooleanOperation):
            return self.reaches(node.left) or self.reaches(node.right)
        if isinstance(node, cst.IfExp):
            return self.reaches(node.body) or self.reaches(node.orelse)
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Name) and func.value == "next" and node.args:
                first = node.args[0].value
                return isinstance(first, (cst.GeneratorExp, cst.ListComp)) \
                    and isinstance(first.elt, cst.Name) and self.elements(first.for_in.iter)
            if isinstance(func, cst.Attribute) and _is_self(func.value):
                return True  # a method of the object: what it returns may be its state
        root = _root(node)
        return isinstance(root, cst.Name) and root.value in self.names

    def elements(self, node: cst.BaseExpression) -> bool:
        """Whether iterating ``node`` may give parts of the object's state."""
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value in _ELEMENTS_OF:
                return self.reaches(func.value)
            if isinstance(func, cst.Name) and func.value in _ELEMENT_FUNCTIONS:
                return any(self.elements(a.value) for a in node.args if a.keyword is None)
        return self.reaches(node)

    def written(self, target: cst.BaseExpression) -> bool:
        """Whether assigning to (or deleting) ``target`` changes the object's state."""
        if isinstance(target, (cst.Tuple, cst.List)):
            return any(self.written(e.value) for e in target.elements)
        return isinstance(target, (cst.Attribute, cst.Subscript)) and self.reaches(target)


def _is_self(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "self"


def _names(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _names(e.value)]
    if isinstance(target, cst.StarredElement):
        return _names(target.value)
    return []


class _Bindings(cst.CSTVisitor):
    """Adds to ``aliases`` every name bound to a value that may be part of the state."""

    def __init__(self, aliases: _Aliases) -> None:
        self.aliases = aliases
        self.grew = False

    def _bind(self, names: Sequence[str]) -> None:
        for name in names:
            if name not in self.aliases.names:
                self.aliases.names.add(name)
                self.grew = True

    def visit_Assign(self, node: cst.Assign) -> None:
        targets = [t.target for t in node.targets]
        if self.aliases.reaches(node.value) or any(self.aliases.written(t) for t in targets):
            self._bind([n for t in targets if isinstance(t, cst.Name) for n in _names(t)])

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None and self.aliases.reaches(node.value):
            self._bind(_names(node.target))

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        if self.aliases.reaches(node.value):
            self._bind(_names(node.target))

    def visit_For(self, node: cst.For) -> None:
        if self.aliases.elements(node.iter):
            self._bind(_names(node.target))

    def visit_CompFor(self, node: cst.CompFor) -> None:
        if self.aliases.elements(node.iter):
            self._bind(_names(node.target))


class _Writes(cst.CSTVisitor):
    """Whether a piece of code (a statement, an expression) writes the object's state."""

    def __init__(self, aliases: _Aliases, changing: frozenset[str]) -> None:
        self.aliases = aliases
        self.changing = changing
        self.found = False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False  # its body runs when it is called, not here

    def visit_Assign(self, node: cst.Assign) -> None:
        if any(self.aliases.written(t.target) for t in node.targets):
            self.found = True

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None and self.aliases.written(node.target):
            self.found = True

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if self.aliases.written(node.target):
            self.found = True

    def visit_Del(self, node: cst.Del) -> None:
        if self.aliases.written(node.target):
            self.found = True

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute):
            if func.attr.value in MUTATORS and self.aliases.reaches(func.value):
                self.found = True
            elif _is_self(func.value) and func.attr.value in self.changing:
                self.found = True
        elif isinstance(func, cst.Name) and func.value in ("setattr", "delattr") and node.args \
                and self.aliases.reaches(node.args[0].value):
            self.found = True


def _aliases_of(function: cst.FunctionDef) -> _Aliases:
    aliases = _Aliases()
    for _ in range(20):  # aliases of aliases: until nothing is added
        bindings = _Bindings(aliases)
        function.body.visit(bindings)
        if not bindings.grew:
            break
    return aliases


def _writes(node: cst.CSTNode, aliases: _Aliases, changing: frozenset[str]) -> bool:
    visitor = _Writes(aliases, changing)
    node.visit(visitor)
    return visitor.found


class _SelfCalls(cst.CSTVisitor):
    """The methods called on ``self`` (``self._record(...)``)."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and _is_self(node.func.value):
            self.names.add(node.func.attr.value)


def changing_methods(functions: Mapping[str, cst.FunctionDef]) -> frozenset[str]:
    """The methods (of ``functions``, by name) that may write the object's state, directly
    or through another method they call on ``self``."""
    changing = {name for name, f in functions.items() if _writes(f.body, _aliases_of(f),
                                                                 frozenset())}
    calls: dict[str, set[str]] = {}
    for name, f in functions.items():
        visitor = _SelfCalls()
        f.body.visit(visitor)
        calls[name] = visitor.names
    grew = True
    while grew:
        grew = False
        for name in functions:
            if name not in changing and calls[name] & changing:
                changing.add(name)
                grew = True
    return frozenset(changing)


def _is_error(node: cst.Return) -> bool:
    if not isinstance(node.value, cst.Dict):
        return False
    for element in node.value.elements:
        if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
            key = element.key.evaluated_value
            if key == "error" or (key == "success" and isinstance(element.value, cst.Name)
                                  and element.value.value == "False"):
                return True
    return False


@dataclass
class _Loop:
    """What the paths that leave one loop early carry: changed at a break / a continue."""

    at_break: bool = False
    at_continue: bool = False


class _Paths:
    """Walks one method's statements, path by path, with "the state may have changed" as the
    fact carried along each path."""

    def __init__(self, aliases: _Aliases, changing: frozenset[str]) -> None:
        self.aliases = aliases
        self.changing = changing
        self.loops: list[_Loop] = []
        self.found = False

    def writes(self, node: cst.CSTNode | None) -> bool:
        return node is not None and _writes(node, self.aliases, self.changing)

    def block(self, statements: Sequence[cst.BaseStatement], changed: bool
              ) -> tuple[bool, bool]:
        """``(changed, ends)`` after ``statements``: whether the state may have changed on a
        path that goes on past them, and whether none does (each returned, raised or left
        the loop)."""
        for statement in statements:
            changed, ends = self.statement(statement, changed)
            if ends:
                return False, True
        return changed, False

    def suite(self, body: cst.BaseSuite, changed: bool) -> tuple[bool, bool]:
        if isinstance(body, cst.IndentedBlock):
            return self.block(body.body, changed)
        assert isinstance(body, cst.SimpleStatementSuite)
        return self.smalls(body.body, changed)

    def smalls(self, smalls: Sequence[cst.BaseSmallStatement], changed: bool
               ) -> tuple[bool, bool]:
        for small in smalls:
            if isinstance(small, cst.Return):
                changed = changed or self.writes(small.value)
                if changed and _is_error(small):
                    self.found = True
                return False, True
            if isinstance(small, cst.Raise):
                return False, True
            if isinstance(small, (cst.Break, cst.Continue)):
                if self.loops:
                    loop = self.loops[-1]
                    if isinstance(small, cst.Break):
                        loop.at_break = loop.at_break or changed
                    else:
                        loop.at_continue = loop.at_continue or changed
                return False, True
            changed = changed or self.writes(small)
        return changed, False

    def statement(self, node: cst.BaseStatement, changed: bool) -> tuple[bool, bool]:
        if isinstance(node, cst.SimpleStatementLine):
            return self.smalls(node.body, changed)
        if isinstance(node, cst.If):
            return self.branch(node, changed)
        if isinstance(node, (cst.For, cst.While)):
            return self.loop(node, changed)
        if isinstance(node, cst.Try):
            return self.attempt(node, changed)
        if isinstance(node, cst.With):
            return self.suite(node.body, changed or any(self.writes(i) for i in node.items))
        if isinstance(node, cst.Match):
            changed = changed or self.writes(node.subject)
            outs = [self.suite(case.body, changed or self.writes(case.guard))
                    for case in node.cases]
            return changed or any(c for c, ends in outs if not ends), False
        # a nested function or class: conservatively, what its body writes happens here
        return changed or self.writes(node), False

    def branch(self, node: cst.If, changed: bool) -> tuple[bool, bool]:
        changed = changed or self.writes(node.test)
        body = self.suite(node.body, changed)
        if isinstance(node.orelse, cst.If):
            other = self.branch(node.orelse, changed)
        elif isinstance(node.orelse, cst.Else):
            other = self.suite(node.orelse.body, changed)
        else:
            other = (changed, False)
        going_on = [c for c, ends in (body, other) if not ends]
        return any(going_on), not going_on

    def loop(self, node: cst.For | cst.While, changed: bool) -> tuple[bool, bool]:
        head = node.iter if isinstance(node, cst.For) else node.test
        changed = changed or self.writes(head)
        loop = _Loop()
        for _ in range(2):  # a change in one round reaches the next round
            self.loops.append(loop)
            end, ends = self.suite(node.body, changed)
            self.loops.pop()
            again = changed or (end and not ends) or loop.at_continue
            if again == changed:
                break
            changed = again
        if node.orelse is not None:  # runs when the loop ends without a break
            end, ends = self.suite(node.orelse.body, changed)
            changed = end and not ends
        return changed or loop.at_break, False

    def attempt(self, node: cst.Try, changed: bool) -> tuple[bool, bool]:
        body = self.suite(node.body, changed)
        if node.orelse is not None and not body[1]:
            body = self.suite(node.orelse.body, body[0])
        raised = changed or self.writes(node.body)  # an exception may follow any write
        outs = [body] + [self.suite(h.body, raised) for h in node.handlers]
        going_on = [c for c, ends in outs if not ends]
        changed_out, ends = any(going_on), not going_on
        if node.finalbody is not None:
            end, final_ends = self.suite(node.finalbody.body,
                                         changed_out or raised or any(c for c, _ in outs))
            return (end, True) if final_ends else (end if not ends else False, ends)
        return changed_out, ends


def error_after_change(function: cst.FunctionDef,
                       changing: frozenset[str] = frozenset()) -> bool:
    """Whether some path through ``function`` returns an error after writing the object's
    state (see the module docstring); ``changing`` names the methods whose call writes it."""
    paths = _Paths(_aliases_of(function), changing)
    paths.suite(function.body, False)
    return paths.found
