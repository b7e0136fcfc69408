"""Tool bodies that read like their spec (compiler/codegen/exprs.py, stmts.py, pycode.py).

An f-string is a Python f-string, ``rt.text`` only around values whose ``str()`` is not the
language's text; a row read by key is ``table[key]``; an int counter is ``i += 1`` even with
``arguments: dynamic``; an enum's ``match`` is Python's ``match``, a union's ``isinstance``
tests; ``require a < b`` fails on ``a >= b`` where that is the same test (ints), not where a
NaN makes it another (floats); a sorted list of entities is ``rt.sorted_keys``. Each is
checked both ways on the code, and every tool must still compute what the spec says (in both
argument modes) and pass ``mypy --strict``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mypy_support import mypy_strict
from spec_support import compile_text, generated_source

from worldspec.compiler.api import check_specs
from worldspec.compiler.build import generate_all, write_packages

SPEC = """\
world Readable "Code that reads like its spec."

config { results: envscaler MODE }

enum Size { small "Small.", large "Large." }

entity Item "A thing for sale." {
  key id: str
  name: str
  size: Size
  price: float
  stock: int
}

entity Hold "A hold on an item." {
  key id: str
  item: Item
}

record Cash "Paid in cash." { amount: float }
record Card "Paid by card." { number: str  limit: float }
union Payment by kind { cash: Cash, card: Card }

state {
  items: table Item
  holds: table Hold
  tags: list[str] = ["new", "it's \\"hot\\" {x} \\\\"]
}

tool describe(id: str, note: str, n: int) -> str "Texts of every kind." {
  let item = items[id]
  return DESCRIBE
}

tool count_up(xs: list[str]) -> int "A counter, and a sum that is not one." {
  let i = 0
  let total = 0
  for x in xs {
    i += 1
    total += len(x)
  }
  return i * 100 + total
}

tool below(a: int, b: int, x: float, y: float) -> str "Order comparisons." {
  require a < b else "a is not below b"
  require x < y else "x is not below y"
  return "below"
}

fn payment_of(kind: str, amount: float) -> Payment {
  if kind == "cash" {
    return Cash(amount: amount)
  }
  return Card(number: "4111", limit: 10.0)
}

tool pay(kind: str, amount: float) -> str "A match over a union." {
  let payment = payment_of(kind, amount)
  match payment {
    case cash as c { return f"cash {c.amount}" }
    case card as c { require c.limit >= amount else "over the limit" }
  }
  return "card"
}

tool size_name(id: str) -> str "A match over an enum." {
  match items[id].size {
    case small { return "S" }
    case large { return "L" }
  }
}

tool by_price(big: bool) -> list[Item] "A sorted list of entities." {
  return sorted([i for i in items if big or i.size == small], key: i => i.price)
}

tool restock() -> int "One more of each item, cheapest first: the sorted rows themselves." {
  let total = 0
  for i in sorted([i for i in items if i.stock >= 0], key: i => i.price) {
    i.stock = i.stock + 1
    total += i.stock
  }
  return total
}

tool clear(first: str) -> int "Delete `first` in the first round: keys looked up as it goes." {
  let n = 0
  for i in sorted([i for i in items if i.stock >= 0], key: i => i.price) {
    if n == 0 {
      delete first from items
    }
    n += 1
  }
  return n
}

tool hold_stock(hold_id: str) -> int "A reference's key indexes its own table as it is." {
  let h = holds[hold_id]
  items[h.item.id].stock += 1
  let i = items[h.item.id]
  return items[i.id].stock * 10 + len([x for x in holds if x.id == holds[h.item.id].id])
}

tool named(id: str) -> str "Narrowed in the branches of an if." {
  let item = items.get(id)
  if item != none and id != "" {
    return item.name
  }
  if item == none {
    return "none"
  } else {
    return item.id
  }
}
"""

#: an f-string of every kind of field, with quotes, braces and a backslash around them
DESCRIBE = (r'f"{item.name} ({item.size}) x{n} at {item.price:.2f}: {note} [{item}] {tags} '
            r"it's \"{n}\" {{braces}} \\" + '"')

DATA = {"items": [
    {"id": "I1", "name": "Lamp", "size": "large", "price": 30.5, "stock": 2},
    {"id": "I2", "name": "Cup", "size": "small", "price": 4.25, "stock": 9},
    {"id": "I3", "name": "Pen", "size": "small", "price": 1.0, "stock": 0},
]}
HOLDS = [{"id": "H1", "item": "I1"}, {"id": "I2", "item": "I2"}]

MODES = {"typed": "", "dynamic": "arguments: dynamic"}


def _spec(mode: str) -> str:
    return SPEC.replace("MODE", MODES[mode]).replace("DESCRIBE", DESCRIBE)


def _body(source: str, tool: str) -> str:
    start = source.index(f"def tool_{tool}(")
    end = source.find("\n\n", start)  # the blank line after the method
    return source[start:end]


def _flat(code: str) -> str:
    """``code`` on one line without its anchor comments, as the printer writes what fits
    (no line breaks in brackets)."""
    return " ".join(re.sub(r"  # [^\n]*", "", code).split()).replace("( ", "(")


@pytest.mark.parametrize("mode", sorted(MODES))
def test_the_tools_read_like_the_spec_and_compute_what_it_says(tmp_path: Path, mode: str
                                                               ) -> None:
    world = compile_text(tmp_path, "readable.world", _spec(mode), "Readable")
    source = generated_source(world)
    describe = _body(source, "describe")
    # an f-string; the row and the list need the language's text, the rest is str()
    assert "f'{" in describe and "[{rt.text(item)}]" in describe
    assert "{rt.text(self.state.tags)}" in describe and "{braces}" in describe
    assert "self.t_items[id_]" in describe and ") or self.t_" not in source
    if mode == "typed":
        # (the text cut into literals Python joins, after spaces)
        assert "{item.name} ({item.size}) x{n} at " in describe
        assert "{item.price:.2f}: {note} [" in describe
    else:  # a parameter may hold any JSON value: its text is the language's, not str()
        assert "{rt.text(note)}" in describe and "{rt.text(n)}" in describe
    count_up = _body(source, "count_up")
    assert "i += 1" in count_up  # a counter, in both modes
    assert "total += " not in count_up  # not a counter: `len(x)` is no literal
    below = _body(source, "below")
    if mode == "typed":  # ints: the opposite comparison is the same test
        assert "if a >= b:" in below
    else:  # `a` may hold a text: Python's error would name `>=`, not `<`
        assert "if not (a < b):" in below
    assert "if not (x < y):" in below  # floats: a NaN is neither below nor not below
    pay = _body(source, "pay")
    # a union's match: isinstance tests of the subject itself (a local: no copy of it)
    assert "if isinstance(payment, Cash):" in pay and "c = payment" in pay
    assert "elif isinstance(payment, Card):" in pay and "_subject" not in pay
    size_name = _flat(_body(source, "size_name"))  # an enum's: Python's match
    assert "match self.t_items[id_].size: case Size.small: return 'S'" in size_name
    assert "rt.sorted_keys(" in _body(source, "by_price")
    # a loop over sorted rows iterates them; one that deletes rows looks their keys up
    assert "for i in rt.each(self, sorted(" in _flat(_body(source, "restock"))
    assert "for i in rt.rows(self.t_items, rt.each(self, rt.sorted_keys(" in \
        _flat(_body(source, "clear"))
    named = _body(source, "named")
    assert "rt.absent()" not in named and "return item.name" in named
    assert "return item.id_" in named
    # a reference's key indexes its own table as it is; a row at hand gives its key field;
    # another table's index is the row's key, looked up
    hold_stock = _flat(_body(source, "hold_stock"))
    assert "self.set_field(self.t_items[h.item], 'stock'," in hold_stock
    assert "self.t_items[h.item].stock, 1)" in hold_stock or \
        "self.t_items[h.item].stock + 1)" in hold_stock
    assert "i: Item = self.t_items[h.item]" in hold_stock
    assert "self.t_items[i.id_]" in hold_stock and "self.t_items[self.t_items" not in hold_stock
    assert "self.t_holds[self.t_items[h.item].id_]" in hold_stock

    ep = world(data=DATA)
    tags = str(["new", "it's \"hot\" {x} \\"])  # as Python prints the list
    assert ep.call("describe", {"id": "I2", "note": "fine", "n": 3}) == {
        "success": True,
        "data": f"Cup (small) x3 at 4.25: fine [I2] {tags} it's \"3\" {{braces}} \\"}
    assert ep.call("describe", {"id": "I9", "note": "", "n": 0}) == {
        "success": False, "error": 'Item "I9" not found.'}
    assert ep.call("count_up", {"xs": ["ab", "c", ""]}) == {"success": True, "data": 303}
    assert ep.call("below", {"a": 1, "b": 2, "x": 0.5, "y": 1.5}) == \
        {"success": True, "data": "below"}
    assert ep.call("below", {"a": 2, "b": 2, "x": 0.5, "y": 1.5}) == \
        {"success": False, "error": "a is not below b"}
    assert ep.call("below", {"a": 1, "b": 2, "x": 1.5, "y": 1.5}) == \
        {"success": False, "error": "x is not below y"}
    assert ep.call("pay", {"kind": "cash", "amount": 5.0}) == \
        {"success": True, "data": "cash 5.0"}
    assert ep.call("pay", {"kind": "card", "amount": 50.0}) == \
        {"success": False, "error": "over the limit"}
    assert ep.call("pay", {"kind": "card", "amount": 5.0}) == {"success": True, "data": "card"}
    assert ep.call("size_name", {"id": "I1"}) == {"success": True, "data": "L"}
    assert ep.call("size_name", {"id": "I2"}) == {"success": True, "data": "S"}
    assert ep.call("by_price", {"big": True}) == {"success": True, "data": ["I3", "I2", "I1"]}
    assert ep.call("by_price", {"big": False}) == {"success": True, "data": ["I3", "I2"]}
    assert ep.call("restock", {}) == {"success": True, "data": 1 + 10 + 3}
    assert ep.call("named", {"id": "I1"}) == {"success": True, "data": "Lamp"}
    held = world(data={**DATA, "holds": HOLDS})
    assert held.call("hold_stock", {"hold_id": "H1"}) == {"success": False,
                                                         "error": 'Hold "I1" not found.'}
    assert held.call("hold_stock", {"hold_id": "I2"}) == {"success": True, "data": 101}
    assert held.call("hold_stock", {"hold_id": "H9"}) == {"success": False,
                                                         "error": 'Hold "H9" not found.'}
    assert ep.call("named", {"id": "I7"}) == {"success": True, "data": "none"}
    # a row the first round deletes is not found on its turn (the call fails), as before
    assert ep.call("clear", {"first": "I1"}) == {
        "success": False, "error": 'Item "I1" not found.'}
    assert ep.call("clear", {"first": "I3"}) == {"success": True, "data": 3}
    if mode == "dynamic":  # a number where a text is declared: its text, as Python's str()
        assert ep.call("describe", {"id": "I1", "note": 7, "n": 1})["data"].startswith(
            "Lamp (large) x1 at 30.50: 7 [I1]")


def test_a_counter_that_is_assigned_is_no_counter(tmp_path: Path) -> None:
    """``i = 5`` anywhere in the body (or a ``+=`` of a non-literal) makes ``i`` an ordinary
    local: with ``arguments: dynamic`` its ``+=`` stays Python's on whatever it holds."""
    spec = _spec("dynamic").replace("    i += 1\n", "    i += 1\n    if x == \"\" { i = 5 }\n")
    world = compile_text(tmp_path, "readable.world", spec, "Readable")
    count_up = _body(generated_source(world), "count_up")
    assert "i += 1" not in count_up and "rt.python_augmented(self, '+', i, 1)" in count_up
    assert world(data=DATA).call("count_up", {"xs": ["ab", "", "c"]}) == \
        {"success": True, "data": 603}


@pytest.mark.parametrize("mode", sorted(MODES))
def test_the_readable_package_passes_mypy_strict(tmp_path: Path, mode: str) -> None:
    spec = tmp_path / "readable.world"
    spec.write_text(_spec(mode), encoding="utf-8")
    result = check_specs([spec])
    assert result.ok, [d.message for d in result.diagnostics]
    write_packages(generate_all(result), tmp_path / "out")
    mypy = mypy_strict(tmp_path / "out", tmp_path / "mypy-cache")
    assert mypy.returncode == 0, mypy.stdout + mypy.stderr
