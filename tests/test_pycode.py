"""The code objects of code generation and their one printer (compiler/codegen/pycode.py):
precedence, wrapping, and the questions code generation asks of expressions."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from worldspec.compiler.codegen.pycode import (
    WIDTH,
    Assign,
    Attr,
    BinOp,
    BoolOp,
    Call,
    Compare,
    Comprehension,
    Const,
    DictOf,
    Expr,
    ExprStmt,
    For,
    FormattedValue,
    FString,
    FunctionDef,
    If,
    IfExp,
    Index,
    Lambda,
    Name,
    Neg,
    Not,
    Raise,
    Return,
    TupleOf,
    attr,
    call,
    charged_value,
    is_charged,
    is_dotted,
    negated,
    print_block,
    rt,
    text_literal,
)

REPO = Path(__file__).resolve().parent.parent
a, b, c, d = Name("a"), Name("b"), Name("c"), Name("d")
VALUES = {"a": 7, "b": 3, "c": 2, "d": 5}


def evaluates(expr: Expr) -> object:
    return eval(expr.flat(), dict(VALUES))  # our own printed arithmetic


@pytest.mark.parametrize(("expr", "text", "value"), [
    (BinOp(BinOp(a, "-", b), "-", c), "a - b - c", 2),
    (BinOp(a, "-", BinOp(b, "-", c)), "a - (b - c)", 6),
    (BinOp(BinOp(a, "+", b), "*", c), "(a + b) * c", 20),
    (BinOp(a, "+", BinOp(b, "*", c)), "a + b * c", 13),
    (BinOp(BinOp(c, "**", b), "**", c), "(c ** b) ** c", 64),
    (BinOp(c, "**", BinOp(b, "**", c)), "c ** b ** c", 512),
    (BinOp(Neg(c), "**", c), "(-c) ** c", 4),
    (Neg(BinOp(c, "**", c)), "-c ** c", -4),
    (BinOp(Const(-2), "**", c), "(-2) ** c", 4),
    (Compare(Compare(a, "<", b), "==", Const(False)), "(a < b) == False", True),
    (Not(Compare(a, "==", b)), "not (a == b)", True),
    (BoolOp("and", (BoolOp("or", (a, b)), c)), "(a or b) and c", 2),
    (BoolOp("or", (a, BoolOp("and", (b, c)))), "a or b and c", 7),
    (BoolOp("and", (BoolOp("and", (a, b)), c)), "a and b and c", 2),
    (IfExp(a, Compare(b, ">", c), IfExp(b, Const(False), c)), "a if b > c else b if False else c",
     7),
    (IfExp(IfExp(a, b, c), Const(True), d), "(a if b else c) if True else d", 7),
    (Attr(Const(7), "real"), "(7).real", 7),
    (Call(Lambda(("x",), BinOp(Name("x"), "+", a)), (b,)), "(lambda x: x + a)(b)", 10),
])
def test_operators_print_with_the_parentheses_their_precedence_needs(
        expr: Expr, text: str, value: object) -> None:
    """Each node prints with exactly the parentheses Python needs to read it back as that
    tree: the text is the one expected, it parses to the same tree as the expected text, and
    it computes what that tree means."""
    assert expr.flat() == text
    assert ast.dump(ast.parse(expr.flat(), mode="eval")) == \
        ast.dump(ast.parse(text, mode="eval"))
    assert evaluates(expr) == value


def test_literals_from_the_spec_are_inert() -> None:
    """A string from the spec is a literal (``repr``): quotes, backslashes, line breaks and
    code-like text stay data."""
    hostile = "'); import os; os.system('x') #\n\\"
    printed = call("ToolError", Const(hostile)).flat()
    tree = ast.parse(printed, mode="eval").body
    assert isinstance(tree, ast.Call) and isinstance(tree.args[0], ast.Constant)
    assert tree.args[0].value == hostile


def _statement_lines(stmt: object, depth: int = 2) -> list[str]:
    assert isinstance(stmt, (Assign, ExprStmt, If, For, Return, Raise, FunctionDef))
    return print_block([stmt], depth)


def _same_code(lines: list[str], flat: str) -> None:
    """``lines`` (a wrapped statement) is the statement ``flat`` once parsed."""
    text = "\n".join(line[8:] for line in lines)
    assert ast.dump(ast.parse(text)) == ast.dump(ast.parse(flat))


def test_a_short_statement_stays_on_one_line() -> None:
    stmt = ExprStmt(call("self.set_field", Name("order"), Const("status"), Name("cancelled")),
                    anchor="retail.world:359")
    assert _statement_lines(stmt) == [
        "        self.set_field(order, 'status', cancelled)  # retail.world:359"]


def test_a_long_call_splits_its_arguments_with_the_anchor_on_the_first_line() -> None:
    """A call too long for the line (its anchor included) puts its arguments on the next
    line when they fit there, else one a line with a trailing comma, splitting an argument
    that is still too long the same way; every line fits and the code is the same."""
    payment = call("_new_OrderPayment", Name("kind"), rt("to_float", call("abs", Name("diff_"))),
                   Name("payment_method_identifier_of_the_customer"))
    value = rt("each", Name("self"), rt("python_concat", attr("order.payment_history"),
                                        TupleOf((payment,))))
    stmt = ExprStmt(call("self.set_field", Name("order"), Const("payment_history"), value),
                    anchor="retail.world:494")
    lines = _statement_lines(stmt)
    assert len(lines) > 2 and all(len(line) <= WIDTH for line in lines)
    assert lines[0] == "        self.set_field(  # retail.world:494"
    assert lines[-1] == "        )"
    assert any(line.endswith(",") for line in lines)  # one a line: trailing commas
    _same_code(lines, stmt.value.flat())
    fits = ExprStmt(call("self.set_field", Name("order"), Const("exchange_items"),
                         call("tuple", call("sorted", rt("each", Name("self"),
                                                         Name("item_ids"))))),
                    anchor="retail.world:412")
    # the code fits on its line without its anchor: the anchor goes above, the code stays whole
    assert _statement_lines(fits) == [
        "        # retail.world:412",
        "        self.set_field(order, 'exchange_items', tuple(sorted(rt.each(self, item_ids))))"]


def test_a_split_tuple_of_one_keeps_its_comma() -> None:
    """A tuple of one element split over lines is still a tuple (its trailing comma), where
    its element fits on the line after the bracket and where it is split further."""
    entry = DictOf(((Const("error"), Const("User not authenticated. Please log in to view "
                                           "tickets.")),))
    for value in (entry, DictOf(entry.entries * 2)):
        stmt = Return(TupleOf((value,)), anchor="ticket_api.world:208")
        lines = _statement_lines(stmt, 3)
        assert len(lines) > 1 and all(len(line) <= WIDTH for line in lines)
        text = "\n".join(line[12:] for line in lines)
        returned = ast.parse(text).body[0]
        assert isinstance(returned, ast.Return) and isinstance(returned.value, ast.Tuple)
        assert ast.dump(ast.parse(text)) == ast.dump(ast.parse(f"return {stmt.value.flat()}"))


def test_a_long_condition_is_parenthesised_and_split_before_its_operators() -> None:
    """An ``if`` whose test does not fit wraps the test in parentheses, as many operands a
    line as fit, a line breaking before an operator; ``not`` of an operator expression keeps
    its parentheses."""
    long_names = [Compare(attr(f"order.field_number_{i}"), "==", Const(f"value {i}"))
                  for i in range(4)]
    stmt = If(BoolOp("and", tuple(long_names)), [Raise(call("ToolError", Const("no")))],
              anchor="x.world:3")
    lines = _statement_lines(stmt)
    assert lines[:4] == [
        "        if (  # x.world:3",
        "            order.field_number_0 == 'value 0' and order.field_number_1 == 'value 1'",
        "            and order.field_number_2 == 'value 2' and order.field_number_3 == 'value 3'",
        "        ):"]
    _same_code(lines, f"if {stmt.test.flat()}:\n    raise ToolError('no')")
    negated = If(Not(BoolOp("or", tuple(long_names))), [Raise(call("ToolError", Const("no")))])
    lines = _statement_lines(negated)
    assert lines[0] == "        if not (" and lines[-2] == "        ):" and len(lines) == 5
    assert lines[2].split()[0] == "or"
    _same_code(lines, f"if {negated.test.flat()}:\n    raise ToolError('no')")


def test_comprehensions_split_by_clause_and_a_lone_one_hugs_its_call() -> None:
    """A comprehension that does not fit puts its element, ``for`` and ``if`` on lines of
    their own; a call of one bracketed argument opens both brackets on one line; a generator
    as a call's only argument gets no trailing comma (which would not parse)."""
    element = call("self.fn_card_for_the_contact_shown_to_the_agent", Name("_c10"))
    condition = BoolOp("and", (Compare(attr("_c10.owner"), "==", call("me.key")),
                               BoolOp("or", (attr("_c10.favorite"), Not(Name("favorites"))))))
    listed = call("tuple", Comprehension("list", element, "_c10",
                                         rt("each", Name("self"), attr("self.t_contacts")),
                                         condition))
    lines = _statement_lines(Return(listed))
    assert lines[0] == "        return tuple(["
    assert lines[-1] == "        ])"
    assert any(line.strip().startswith("for _c10 in") for line in lines)
    assert any(line.strip().startswith("if _c10.owner") for line in lines)
    _same_code(lines, f"return {listed.flat()}")
    generator = call("all", Comprehension("gen", element, "_c10", attr("self.t_contacts"),
                                          condition))
    lines = _statement_lines(Return(generator))
    assert not any(line.rstrip().endswith(",") for line in lines)
    _same_code(lines, f"return {generator.flat()}")


def test_split_arguments_fill_their_lines() -> None:
    """Arguments that do not fit on one line take as many a line as fit (not one a line);
    a long last one (not a text) after a short start of the line opens its split there; after
    a long start, or a text, it begins a line of its own."""
    args = [Const(f"argument_number_{i}") for i in range(8)]
    lines = _statement_lines(ExprStmt(call("self.record", *args)))
    assert lines == [
        "        self.record(",
        "            'argument_number_0', 'argument_number_1', 'argument_number_2', "
        "'argument_number_3',",
        "            'argument_number_4', 'argument_number_5', 'argument_number_6', "
        "'argument_number_7',",
        "        )"]
    value = DictOf(((None, attr("customer.payment_methods")),
                    (Name("payment_method_id"),
                     call("self.fn_adjust_balance", Name("method"),
                          Neg(Name("total_amount_of_the_order"))))))
    stmt = ExprStmt(call("self.set_field", Name("customer"), Const("payment_methods"), value),
                    anchor="shop.world:378")
    lines = _statement_lines(stmt)
    assert lines == [
        "        self.set_field(  # shop.world:378",
        "            customer, 'payment_methods', {",
        "                **customer.payment_methods,",
        "                payment_method_id: self.fn_adjust_balance(method, "
        "-total_amount_of_the_order),",
        "            },",
        "        )"]
    _same_code(lines, stmt.value.flat())
    # after a long start, or a text (whose pieces would stand level with the arguments): the
    # last argument on lines of its own
    long_start = ExprStmt(call("self.set_field", attr("self.state.the_current_customer"),
                               Const("payment_methods"), value))
    assert _statement_lines(long_start)[1] == \
        "            self.state.the_current_customer, 'payment_methods',"
    message = FString(("The slot ", FormattedValue(attr("slot.id_")),
                       " has already started, or it is in the past, and cannot be booked for ",
                       FormattedValue(attr("patient.name")), "."))
    built = Return(call("self.episode.message_texts.built", attr("self.episode"), message))
    lines = _statement_lines(built)
    assert lines[:2] == ["        return self.episode.message_texts.built(",
                         "            self.episode,"]
    assert lines[2].startswith("            f'The slot") and len(lines) == 5
    _same_code(lines, f"return {built.value.flat() if built.value else ''}")


def test_a_call_holding_a_message_aligns_its_arguments_with_its_bracket() -> None:
    """A call that holds prose (a message, a description) and does not fit is written as by
    hand: its arguments aligned with its opening bracket, as many a line as fit, the text
    cut into literals there and the bracket closed after the last (PEP 8's aligned
    continuation), where that takes fewer lines; a call holding only names and identifiers,
    or whose bracket stands too far right, splits as black does."""
    message = FString(("The slot ", FormattedValue(attr("slot.id_")),
                       " has already started, or it is in the past, and cannot be booked for ",
                       FormattedValue(attr("patient.name")), "."))
    fail = ExprStmt(call("self.fail", message), anchor="clinic.world:206")
    lines = _statement_lines(fail)
    assert len(lines) == 2 and lines[0].startswith("        self.fail(f'The slot {slot.id_} ")
    assert lines[0].endswith("'  # clinic.world:206")
    assert lines[1].startswith(" " * 18 + "f'") and lines[1].endswith("{patient.name}.')")
    _same_code(lines, fail.value.flat())
    declared = call("param", Const("phone"), call("arg.refined", attr("arg.TEXT"),
                                                  pattern=Const("^\\+[0-9]{7,15}$")),
                    Const("A contact phone number in international form, e.g. +15125550190. "
                          "Family members may share one."), default=Const(None))
    lines = _statement_lines(ExprStmt(declared), 1)
    assert lines[0] == "    param('phone', arg.refined(arg.TEXT, pattern='^\\\\+[0-9]{7,15}$'),"
    assert all(line.startswith(" " * 10) for line in lines[1:]) and len(lines) == 4
    assert lines[-1].endswith(" default=None)")
    _same_code([" " * 4 + line for line in lines], declared.flat())
    # a call whose bracket stands too far right splits as black does
    deep = ExprStmt(call("self.episode.tables.appointments.reminders.fail", message))
    lines = _statement_lines(deep)
    assert lines[0].endswith(".fail(") and lines[-1] == "        )"
    _same_code(lines, deep.value.flat())


def test_a_bracketed_last_argument_after_names_hugs_the_call() -> None:
    """``rt.each(self, [`` ... ``])``: a call whose last argument is bracketed and whose other
    arguments are names splits inside that argument's brackets, not one level deeper; one
    with another kind of argument before it does not."""
    rows = Comprehension("list", attr("_p14.id_"), "_p14", rt("each", Name("self"),
                                                               attr("self.t_patients")),
                         Compare(call("rt.read", Name("self"), Name("needle_of_the_query")),
                                 "in", call("_p14.name.lower")))
    lines = _statement_lines(Return(rt("each", Name("self"), rows)))
    assert lines[0] == "        return rt.each(self, ["
    assert lines[-1] == "        ])" and len(lines) == 4
    _same_code(lines, f"return {rt('each', Name('self'), rows).flat()}")
    after_call = rt("each", call("self.episode"), rows)
    lines = _statement_lines(Return(after_call))
    assert lines[0] == "        return rt.each(" and lines[1] == "            self.episode(), ["
    _same_code(lines, f"return {after_call.flat()}")


def test_a_map_copy_and_keywords_split_inside_their_items() -> None:
    value = DictOf(((None, attr("user.payment_methods")),
                    (Name("payment_method_id"),
                     call("_new_GiftCard", attr("card.identifier_of_the_card"),
                          call("round", BinOp(attr("card.balance"), "-", Name("difference")),
                               Const(2))))))
    stmt = ExprStmt(call("self.set_field", Name("user"), Const("payment_methods"), value),
                    anchor="retail.world:497")
    lines = _statement_lines(stmt)
    assert all(len(line) <= WIDTH for line in lines)
    _same_code(lines, stmt.value.flat())


def test_a_long_docstring_is_split_between_words_into_one_literal() -> None:
    """A docstring too long for its line is several literals in parentheses, split after
    spaces and line breaks; Python joins them into the very text (it stays the docstring)."""
    doc = ("Send a text message to one person. It goes into the direct conversation with "
           "them, which\nis created if there is none yet ('quoted' \"too\").\nThe end.")
    fn = FunctionDef("tool_send", ["self"], "None", [Return(None)], doc=doc,
                     anchor="messaging.world:445")
    lines = print_block([fn], 1)
    assert all(len(line) <= WIDTH for line in lines)
    tree = ast.parse("\n".join(line[4:] for line in lines))
    assert isinstance(tree.body[0], ast.FunctionDef) and ast.get_docstring(
        tree.body[0], clean=False) == doc
    # the parentheses open on the first literal's line and close on the last one's
    assert lines[1].startswith("        ('Send a text") and lines[-2] == "         'The end.')"
    assert len(lines) == 1 + 4 + 1  # the signature, four literals, the body
    word = FunctionDef("tool_w", ["self"], "None", [Return(None)], doc="w" * 120)
    assert print_block([word], 1)[1] == "        " + repr("w" * 120)
    short = FunctionDef("tool_get", ["self"], "None", [Return(None)], doc="Get it.")
    assert print_block([short], 1)[1] == "        'Get it.'"


def test_a_long_signature_puts_its_parameters_on_lines_of_their_own() -> None:
    params = ["self", "order_id: Order", "item_ids: tuple[str, ...]",
              "new_item_ids: tuple[str, ...]", "payment_method_id: str"]
    fn = FunctionDef("tool_exchange_delivered_order_items", params, "Order", [Return(None)],
                     anchor="retail.world:369")
    lines = print_block([fn], 1)
    assert lines[0] == "    def tool_exchange_delivered_order_items(  # retail.world:369"
    assert lines[1:-2] == [
        "        self, order_id: Order, item_ids: tuple[str, ...], new_item_ids: tuple[str, ...],",
        "        payment_method_id: str,"]
    assert lines[-2] == "    ) -> Order:"
    assert all(len(line) <= WIDTH for line in lines)
    ast.parse("\n".join(line[4:] for line in lines))


def test_parameters_too_many_for_one_line_fill_their_lines() -> None:
    """Parameters that do not fit one line of their own take as many a line as fit, each
    line ending with a comma (as a call's arguments fill theirs), not one a line."""
    params = ["self", "order_id: Order", "address1: str", "address2: str", "city: str",
              "state_: str", "country: str", "zip_: str", "note: str | None"]
    fn = FunctionDef("tool_modify_pending_order_address", params, "Order", [Return(None)])
    lines = print_block([fn], 1)
    assert lines[:-1] == [
        "    def tool_modify_pending_order_address(",
        "        self, order_id: Order, address1: str, address2: str, city: str, state_: str, "
        "country: str,",
        "        zip_: str, note: str | None,",
        "    ) -> Order:"]
    assert all(len(line) <= WIDTH for line in lines)
    tree = ast.parse("\n".join(line[4:] for line in lines))
    function = tree.body[0]
    assert isinstance(function, ast.FunctionDef)
    assert [a.arg for a in function.args.args] == [p.split(":")[0] for p in params]


def test_an_anchor_goes_above_a_signature_that_fits_without_it() -> None:
    """A signature that fits its line without its anchor comment, not with it, keeps its one
    line with the anchor alone above it (two lines, not three); one that fits with the anchor
    keeps it at its end."""
    params = ["ep: ClinicScheduling", "init: ClinicScheduling"]
    fn = FunctionDef("_check_julia_reschedule__checkup_booked", params, "bool",
                     [Return(Const(True))], anchor="tasks.world:17")
    lines = print_block([fn], 0)
    assert lines == [
        "# tasks.world:17",
        "def _check_julia_reschedule__checkup_booked(ep: ClinicScheduling, "
        "init: ClinicScheduling) -> bool:",
        "    return True"]
    assert len(lines[1]) <= WIDTH < len(lines[1] + "  # tasks.world:17")
    tree = ast.parse("\n".join(lines))
    assert isinstance(tree.body[0], ast.FunctionDef) and tree.body[0].lineno == 2
    short = FunctionDef("_check_t__c", params[:1], "bool", [Return(Const(True))],
                        anchor="tasks.world:17")
    assert print_block([short], 0)[0] == \
        "def _check_t__c(ep: ClinicScheduling) -> bool:  # tasks.world:17"


def test_a_multi_line_text_literal_is_one_literal_per_line_split_where_too_long() -> None:
    """A policy's literal: one ``repr`` per line of the text, a line too long for the width
    split after its spaces; Python reads back the very text."""
    long_line = "- Act for that customer only: read and change only their own orders, and pay " \
                "or refund only\n"
    text = "You are the agent.\n" + long_line + "  with 'their' \"own\" methods.\n\nThe end."
    literal = text_literal(text, "    ")
    lines = literal.splitlines()
    assert lines[0] == "(" and lines[-1] == "    )" and len(lines) == 2 + 6
    assert all(len(line) <= WIDTH for line in lines)
    assert ast.literal_eval(literal) == text
    assert "        'You are the agent.\\n'" in lines
    one_line = "One line, however long " * 3
    assert text_literal(one_line, "    ") == repr(one_line)
    # one line too long for its place is split too (a class constant's description)
    longer = "One line, however long " * 9
    split = text_literal(longer, "    ", len("DESCRIPTION: ClassVar[str] = "))
    assert split.startswith("(\n") and ast.literal_eval(split) == longer
    assert all(len(line) <= WIDTH for line in split.splitlines())


def test_the_questions_codegen_asks_of_expressions() -> None:
    """Whether an expression already pays for its elements, and whether it may be read
    twice at no cost, are read off the objects: yes and no cases of each."""
    charged = rt("each", Name("self"), attr("order.items"))
    assert is_charged(charged, "self") and charged_value(charged, "self") == attr("order.items")
    assert not is_charged(charged, "ep")  # another episode's budget
    assert not is_charged(rt("built", Name("self"), Name("x")), "self")
    assert not is_charged(attr("order.items"), "self")
    assert is_dotted(Name("key")) and is_dotted(attr("order.user_id"))
    assert not is_dotted(call("key")) and not is_dotted(Index(Name("xs"), Const(0)))


def test_generated_tool_bodies_name_no_runtime_internals() -> None:
    """The checked-in worlds' tools, helpers, checks and invariant checks call the runtime's
    named API: none names the undo log, the row caches or the budget's counters (the classes
    the other part of code generation writes are left out)."""
    private = re.compile(r"\b(?:self|ep)\._(?:undo|steps|set|insert|delete|next|rng|deleted|"
                         r"changed_rows)\b|\._(?:stale|digest|frags)\b|\b\w+\._text\b")
    assert private.search("        self._undo.append((0, row))")  # the check sees them
    assert private.search("        row._stale |= 4") and private.search("x = row._text")
    assert not private.search("        self.set_field(row, 'status', value)")
    checked = 0
    for path in sorted((REPO / "generated").glob("*/world.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and (
                    node.name.startswith(("tool_", "fn_", "_check_"))):
                source = ast.unparse(node)
                assert not private.search(source), (path.parent.name, node.name)
                checked += 1
    assert checked > 300


#: texts a spec may hold, each a way out of a string literal or into a replacement field
HOSTILE_TEXTS = ["it's \"quoted\"", "{a} {{b}} }{", "back\\slash\\", "line\nbreak\ttab\r",
                 "nul\x00 bell\x07 \u2028 sep", "'); import os; os.system('x') #", "\\N{DASH}"]


def _joined_text(parts: tuple[str | FormattedValue, ...], scope: dict[str, object]) -> str:
    """What an f-string of ``parts`` must compute: each text as it is, each field as
    ``format(value, spec)`` (Python's own meaning of a replacement field)."""
    return "".join(part if isinstance(part, str) else
                   format(eval(part.value.flat(), dict(scope)), part.spec) for part in parts)


@pytest.mark.parametrize("text", HOSTILE_TEXTS)
def test_an_fstring_keeps_hostile_text_as_data(text: str) -> None:
    """Text around the fields is data, whatever quotes, braces, backslashes or control
    characters it holds: the printed f-string is one f-string literal that computes exactly
    the text and the fields' values, and runs nothing."""
    parts = (text, FormattedValue(Name("a")), text, FormattedValue(Name("b"), ">6"), text)
    node = FString(parts)
    tree = ast.parse(node.flat(), mode="eval").body
    assert isinstance(tree, ast.JoinedStr)
    assert eval(node.flat(), dict(VALUES)) == _joined_text(parts, VALUES)


def test_an_fstring_picks_the_quote_its_fields_do_not_use_and_else_concatenates() -> None:
    """A field whose code holds a string literal is written inside the other quote kind; a
    field that no f-string literal of Python 3.11 may hold (both quote kinds, a backslash),
    or a spec that is not plain, makes it the concatenation of the same text."""
    scope = {"m": {"k": 1, "it's": 2, "say \"x\"": 3, "back\\": 4}}
    single = FormattedValue(Index(Name("m"), Const("k")))
    node = FString(("got ", single, "'"))
    assert node.flat() == 'f"got {m[\'k\']}\'"'
    assert eval(node.flat(), dict(scope)) == "got 1'"
    for awkward in ([FormattedValue(Index(Name("m"), Const("it's"))),
                     FormattedValue(Index(Name("m"), Const('say "x"')))],
                    [FormattedValue(Index(Name("m"), Const("back\\")))],
                    [FormattedValue(Name("a"), "{>5")], [FormattedValue(Name("a"), "'>5")]):
        parts = ("x ", *awkward, " y")
        printed = FString(parts).flat()
        assert not isinstance(ast.parse(printed, mode="eval").body, ast.JoinedStr)
        assert eval(printed, dict(scope, a=7)) == _joined_text(parts, dict(scope, a=7))


def test_an_fstring_parenthesises_fields_that_would_read_as_its_syntax() -> None:
    """A field's colon, ``!`` or braces would start a spec, a conversion or end the field:
    such code is parenthesised inside the braces."""
    node = FString(("is ", FormattedValue(Compare(a, "!=", b)), " ",
                    FormattedValue(IfExp(a, Const(True), b)), " ",
                    FormattedValue(Call(Lambda(("x",), Name("x")), (c,)))))
    assert node.flat() == "f'is {(a != b)} {a if True else b} {((lambda x: x)(c))}'"
    assert eval(node.flat(), dict(VALUES)) == "is True 7 2"
    plain = FString((FormattedValue(Name("a")), " and ", FormattedValue(Name("b"))))
    assert plain.flat() == "f'{a} and {b}'"


def test_a_long_fstring_splits_into_literals_python_joins() -> None:
    """An f-string too long for its line is cut after spaces into literals one a line (a
    piece without a field is a plain string), inside the call's brackets or in parentheses
    of its own; every line fits and the code computes the same text."""
    words = "the quick brown fox jumps over the lazy dog {and} 'more' " * 3
    parts = (words, FormattedValue(Name("a")), " " + words, FormattedValue(Name("b"), "02d"))
    message = FString(parts)
    raise_ = Raise(call("ToolError", message), anchor="shop.world:12")
    lines = _statement_lines(raise_)
    assert len(lines) > 3 and all(len(line) <= WIDTH for line in lines)
    assert lines[0].startswith("        raise ToolError('the quick brown fox") and \
        lines[0].endswith("  # shop.world:12")
    _same_code(lines, raise_.error.flat().join(["raise ", ""]))
    code = "\n".join(line[8:] for line in lines)
    namespace: dict[str, object] = dict(VALUES, ToolError=ValueError)
    with pytest.raises(ValueError) as raised:
        exec(code, namespace)  # our own printed code
    assert raised.value.args[0] == _joined_text(parts, VALUES)
    returned = Return(message, anchor="shop.world:13")
    lines = _statement_lines(returned)
    assert lines[0] == "        return (  # shop.world:13" and lines[-1] == "        )"
    assert all(len(line) <= WIDTH for line in lines)
    _same_code(lines, "return " + message.flat())
    short = Return(FString(("Order ", FormattedValue(Name("a")), " is not pending.")),
                   anchor="retail.world:1")
    assert _statement_lines(short) == [
        "        return f'Order {a} is not pending.'  # retail.world:1"]


@pytest.mark.parametrize(("op", "opposite"), [
    ("==", "!="), ("!=", "=="), ("in", "not in"), ("not in", "in"), ("is", "is not"),
    ("is not", "is")])
def test_a_negated_comparison_is_its_opposite_where_python_defines_it_so(
        op: str, opposite: str) -> None:
    """``not (x op y)`` becomes ``x opposite y`` for the comparisons Python defines as each
    other's negation, with the same truth on every value (a NaN included)."""
    test = negated(Compare(Name("x"), op, Name("y")))
    assert test == Compare(Name("x"), opposite, Name("y"))
    nan = float("nan")
    for x, y in [(1, 1), (1, 2), (nan, nan), ("a", "abc"), (None, None), ((nan,), (nan,))]:
        if op in ("in", "not in") and not isinstance(y, (str, tuple)):
            continue
        if op in ("in", "not in") and isinstance(y, str) and not isinstance(x, str):
            continue
        assert eval(test.flat(), {"x": x, "y": y}) == \
            eval(Not(Compare(Name("x"), op, Name("y"))).flat(), {"x": x, "y": y})


def test_order_comparisons_stay_negated_and_a_double_negation_is_its_operand() -> None:
    """``not (a < b)`` is not ``a >= b`` (a NaN is neither): it stays; ``not (not x)`` in a
    test is ``x``; anything else is ``not`` of it."""
    less = Compare(a, "<", b)
    assert negated(less) == Not(less)
    nan = float("nan")
    assert eval(negated(less).flat(), {"a": nan, "b": 1.0}) != \
        eval(Compare(a, ">=", b).flat(), {"a": nan, "b": 1.0})
    assert negated(Not(Name("x"))) == Name("x")
    assert negated(call("any", Name("xs"))) == Not(call("any", Name("xs")))


def test_a_long_string_splits_into_literals_python_joins() -> None:
    """A text too long for its line (an invariant's message, a check's source) is cut after
    spaces into literals one a line, each written as ``repr`` writes it; a short one stays
    one literal."""
    text = "A doctor's appointments never overlap, \"whatever\" the slot {x} says\\n. " * 3
    raise_ = Raise(call("InvariantError", Const(text), Const("clinic.world:248")))
    lines = _statement_lines(raise_)
    assert len(lines) > 4 and all(len(line) <= WIDTH for line in lines)
    code = "\n".join(line[8:] for line in lines)
    tree = ast.parse(code).body[0]
    assert isinstance(tree, ast.Raise) and isinstance(tree.exc, ast.Call)
    assert [ast.literal_eval(arg) for arg in tree.exc.args] == [text, "clinic.world:248"]
    short = Raise(call("InvariantError", Const("it's short"), Const("a.world:1")))
    assert _statement_lines(short) == ['        raise InvariantError("it\'s short", \'a.world:1\')']


def test_a_statement_whose_first_line_stays_too_long_is_parenthesised() -> None:
    """A long annotated target before a call, or an anchor after an expression with no
    bracket to split, would leave the first line too long: the expression goes in
    parentheses on a line of its own (the same code), where a plain split cannot help."""
    lookup = call(Attr(Attr(Index(attr("self.t_users"), attr("order.user_id")),
                            "payment_methods"), "get"), Name("payment_method_id"))
    stmt = Assign(Name("method"), lookup, "PaymentMethod | None", anchor="retail.world:403")
    lines = _statement_lines(stmt)
    assert lines == [
        "        method: PaymentMethod | None = (  # retail.world:403",
        "            self.t_users[order.user_id].payment_methods.get(payment_method_id)",
        "        )"]
    _same_code(lines, "method: PaymentMethod | None = " + lookup.flat())
    flag = Attr(Index(attr("self.t_tellers"), rt("present", attr("self.state.current_teller"))),
                "can_freeze")
    test = If(Not(flag), [Raise(call("ToolError", Const("no")))],
              anchor="retail_bank.world:341")
    lines = _statement_lines(test)  # it fits without its anchor: the anchor goes above
    assert lines == [
        "        # retail_bank.world:341",
        "        if not self.t_tellers[rt.present(self.state.current_teller)].can_freeze:",
        "            raise ToolError('no')"]
    _same_code(lines, f"if not {flag.flat()}:\n    raise ToolError('no')")
    deeper = If(Not(flag), [Raise(call("ToolError", Const("no")))],
                anchor="retail_bank.world:341")
    lines = print_block([deeper], 7)  # too long even without its anchor: parenthesised
    assert lines[0] == " " * 28 + "if not (  # retail_bank.world:341"
    assert all(len(line) <= WIDTH for line in lines)
    fits = Assign(Name("method"), call("m.get", Name("k")), "T | None", anchor="a.world:1")
    assert _statement_lines(fits) == ["        method: T | None = m.get(k)  # a.world:1"]
