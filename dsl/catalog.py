"""The catalog of diagnostic codes: severity, title, explanation and an example.

This table is the single source of truth: the checker reports by code,
``worldspec explain`` prints entries, and ``docs/diagnostics.md`` is
generated from it (a test keeps the document in sync). A code the checker no
longer reports stays here, marked ``retired`` with the reason, and is never
reused for another meaning.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CatalogEntry", "CATALOG", "entry"]


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    """What one diagnostic code means."""

    code: str
    severity: str
    title: str
    explanation: str
    example: str
    #: why the checker no longer reports the code ("" while it does); a retired code keeps
    #: its entry, so ``worldspec explain`` and the document still answer for old output,
    #: and is never given to another meaning
    retired: str = ""


CATALOG: dict[str, CatalogEntry] = {}


def entry(code: str, severity: str, title: str, explanation: str, example: str,
          *, retired: str = "") -> None:
    """Register a code; codes are unique. ``retired`` says why a code is no longer reported."""
    if code in CATALOG:
        raise ValueError(f"duplicate diagnostic code {code}")
    CATALOG[code] = CatalogEntry(code, severity, title, explanation.strip(), example.strip("\n"),
                                 retired.strip())


# ----------------------------------------------------------- WS1xx: input and syntax
entry("WS100", "error", "file cannot be read",
      """
The file could not be read: it does not exist, is a directory, is not
UTF-8 text, or contains NUL bytes. Spec files are UTF-8 text.
""", """
$ worldspec check missing.world
""")
entry("WS101", "error", "syntax error",
      """
The parser met a token it did not expect. The message says what it expected
in words. After a syntax error the parser does not stop: it skips the broken
statement, field or task item up to where the next one starts (a line that
begins with a word in the broken item's column, or the `}` that closes the
block), or else to the next top-level declaration, and goes on.
So one file reports its independent mistakes together, each once: an error
that only follows from the skip is not reported. A declaration reports at
most 10 syntax errors, a file at most 100.
""", """
entity User {
  key id str        # expected ':' after the field name
}
""")
entry("WS102", "error", "unterminated string",
      """
A string literal was opened with `"` and not closed on the same line. Use
triple quotes for text that spans lines.
""", """
tool greet() -> str "Says hello {
  return "hello
}
""")
entry("WS103", "error", "invalid escape or literal",
      """
A string contains an escape sequence WorldSpec does not know, or a number
or regular expression literal is malformed. Known escapes: \\\\ \\" \\n \\t
\\r \\0 \\uXXXX \\u{X...}.
""", """
let s = "tab\\q"
""")
entry("WS104", "error", "invalid f-string",
      """
An `f"..."` string has an unbalanced `{` or `}` or an interpolation that is
not a valid expression. Write `{{` and `}}` for literal braces.
""", """
let s = f"total: {order.total"
""")
entry("WS105", "error", "nesting too deep",
      """
The expression or block nesting exceeds what the compiler accepts (200
levels). Split the expression with `let`.
""", """
let x = ((((((((((((... 1 ...))))))))))))
""")
entry("WS106", "error", "import not found or cyclic",
      """
An `import` names a file that does not exist, cannot be read, or imports
the importing file back (directly or through other files).
""", """
import "shared/types.world"   # no such file
""")

entry("WS107", "error", "lone surrogate in a string",
      """
A string escape (or the text itself) names a code point between U+D800 and
U+DFFF. Those are the two halves of a UTF-16 surrogate pair, not characters:
no encoding can write one alone, so the string could never be hashed, saved
or sent. Write the character itself, or its code point as `\\u{1F600}`
instead of the pair `\\uD83D\\uDE00`.
""", """
let s = "half a smiley: \\uD83D"
""")
entry("WS108", "error", "lone surrogate in a regular expression",
      """
A `matching /.../` expression names a code point between U+D800 and U+DFFF
(`\\uD800`, `[\\uD800-\\uDBFF]`). No text can hold such a code point
alone, so the pattern could only match strings that cannot be encoded.
Match the characters themselves, or their code points as `\\U0001F600`.
""", """
type Emoji = str matching /[\\uD800-\\uDBFF][\\uDC00-\\uDFFF]/
""")

entry("WS109", "error", "bracket never closed",
      """
A `{`, `(` or `[` is opened and never closed: the declaration ends (the next
one starts, or the file ends), or a different closing bracket comes first.
The error points at the bracket that is left open and says what it opens
(`'{' of tool 'lend'`, `'{' of the `if` on line 7 (in tool 'lend')`); the
hint says where the closing bracket is missing. Every declaration is parsed
on its own, so the declarations after it are still checked.
""", """
tool lend(book: Book "The book.") "Lend a book." {
  if book.lent { fail "Already lent." }
  book.lent = true
                      # '}' missing here: '{' of tool 'lend' is never closed
tool give_back(book: Book "The book.") "Take a book back." { book.lent = false }
""")
entry("WS110", "error", "Python-style conditional expression",
      """
Python writes a conditional expression `a if c else b`; WorldSpec writes the
condition first: `if c then a else b`. The hint rewrites the expression
when it fits on its line.
""", """
let fee = 0 if member.premium else 2      # write: let fee = if member.premium then 0 else 2
""")
entry("WS111", "error", "quantifier used as an operand",
      """
A quantifier (`all x in xs: cond`, `any ...`, `exists ...`) is a whole
expression: its condition reaches as far right as it can, so it cannot be
the operand of `or`, `and`, `not` or a comparison without parentheses. Write
`a or (any x in xs: cond)` and `not (all x in xs: cond)`. Python's
`any(cond for x in xs)` is also reported here: write `any x in xs: cond`.
""", """
require admin or any m in members: m.id == caller else "Not allowed."
# write: require admin or (any m in members: m.id == caller) else "Not allowed."
""")
entry("WS112", "error", "slice form not supported",
      """
A `:` inside `xs[...]` asks for a slice. The message says which slice forms
the language has, if any (the grammar is asked, so the text stays true as
the language grows): `xs[a:b]`, `xs[a:]`, `xs[:b]`, `xs[a:b:c]` as far as
the grammar takes them; any other form, such as four parts `xs[a:b:c:d]`,
is reported here.
""", """
let rest = names[1:2:3:4]
""")
entry("WS113", "error", "a call on its own is not a statement",
      """
A statement that is only a call, such as `len(xs)` or `xs.append(x)`, is not
valid: functions, helper `fn`s and methods never change anything, so its
result would be lost. Use the result (`let n = len(xs)`, `return f(x)`,
`require check(x) else "..."`), or change data with a statement:
`append x to xs`, `remove x from xs`, `insert row into table`, `m[k] = v`.
For a call wanted only for its effect on the episode (`next(ids)` takes an
id, a `random_*` builtin draws from the RNG) bind it: `let _ = next(ids)`.
""", """
tool tag(book: Book "The book.", tag: str "The tag.") "Tag a book." {
  book.tags.append(tag)       # write: append tag to book.tags
}
""")


# ------------------------------------------------------------ WS2xx: names and scopes
entry("WS201", "error", "unknown name",
      """
A name is used that is not a local, a parameter, a state item, a declared
type, a helper `fn` or a builtin. Bare enum members are only understood where
the expected type is that enum; elsewhere write `Enum.member`.
""", """
tool whoami() -> str {
  return curent_user.name     # did you mean 'current_user'?
}
""")
entry("WS202", "error", "unknown type",
      """
A type name is not a builtin type (str int float bool date datetime duration
json list set map) nor a declared enum, record, entity, union or alias.
""", """
entity Order { key id: str  buyer: Costumer }   # did you mean 'Customer'?
""")
entry("WS203", "error", "duplicate declaration",
      """
Two declarations share a name in the same namespace: types, helper functions
and state share one namespace; tools, invariants and tasks each have their
own. Imported files count too.
""", """
record Address { city: str }
record Address { street: str }
""")
entry("WS204", "error", "duplicate member",
      """
A field, enum member, union variant, parameter, state item, check, config key,
named argument or a task's `reward` appears twice in the same declaration.
""", """
entity User { key id: str  name: str  name: str }
""")
entry("WS205", "error", "unknown field",
      """
The value has no field, method or member with this name. The message lists
what the type offers when a close name exists.
""", """
tool rename(user: User, name: str) { user.nmae = name }
""")
entry("WS206", "error", "unknown tool or function",
      """
A call names a function that is neither a builtin, a helper `fn`, nor a
record constructor; or a task's solution calls a tool the world lacks. A
parameter, local or state item named like a builtin or `fn` (`days`, `len`)
hides it where it is in scope: the message names both; rename the value.
""", """
solution { send_mesage(to: "U002", body: "hi") }
""")
entry("WS207", "error", "unknown enum member or variant",
      """
`Enum.member`, a `case`, or an enum value in data names a member or a union
variant tag that the type does not declare.
""", """
match order.status { case shiped { } }
""")
entry("WS208", "error", "name clashes with a builtin",
      """
A tool, helper, state item or type is named like a builtin function or value
(`len`, `now`, `sorted`...), or a state item like a method of the generated
environment (`reset`, `call`, `snapshot`...). Choose another name. Tool names
are free of the environment's methods: a tool may be called `reset`, `diff`
or `copy` (tools are dispatched by name through `TOOLS`, apart from the
environment's own methods).
""", """
state { len: int = 0 }      # the language already has len()
""")
entry("WS209", "error", "unknown world",
      """
A task names a world that is not declared in this file nor in the files it
imports.
""", """
import "shop.world"
task t in Shopp { }
""")
entry("WS210", "error", "name defined twice in a scope",
      """
A local (`let`, loop variable, `case ... as`, lambda or quantifier variable)
reuses a name already defined in the same tool or expression.
""", """
let total = 0
let total = 1
""")
entry("WS211", "error", "check-only name outside a check",
      """
`initial` (the state before the episode) and `matches_solution()` (the state the
reference solution leaves) exist only in task checks.
""", """
tool t() -> int { return count(initial.users) }
""")
entry("WS212", "error", "conversation name outside a check",
      """
`reply` (the agent's last message to the user) and `replies` (all its messages,
in order) exist only in task checks: the conversation is graded when the episode
is scored, and tools, helpers, invariants and defaults never see it.
""", """
invariant polite: reply.contains("please")
""")
entry("WS213", "error", "policy file cannot be read",
      """
`policy file "..."` names a file that does not exist, is not a file, or is not
UTF-8 text. The path is relative to the spec file.
""", """
policy file "polcy.md"
""")
entry("WS214", "warning", "a local or parameter shadows state",
      """
A parameter, local or loop variable has the name of a state item or table. In
that body the bare name means the local, so the state item cannot be read or
assigned by its name, and a test such as `username == username` is always true.
Read and assign the state as `state.username`; once the body does, the warning
is not given (a tool's parameter names are what the agent sees, so they often
have to match the original's).
""", """
state { username: str? = none }
tool login(username: str) {
  username = username          # assigns nothing: the parameter is not assignable
}
# write:  state.username = username
""")
entry("WS215", "error", "unknown qualified state name",
      """
`state.x` names the state item `x`, and the world has no state item of that
name.
""", """
state { users: table User }
fn count() -> int { return len(state.usres) }
""")
entry("WS216", "error", "`state.x` where a local is called state",
      """
`state.x` always means the state item `x`. A parameter or local may still be
called `state` (an address has a state), and the bare name reads it; but the
field `x` of such a local cannot be read as `state.x`.
""", """
record Address { city: str  state: str }
tool move(state: Address) -> str { return state.city }
""")
entry("WS217", "error", "a const is not a literal",
      """
A top-level `const` is built once, when the world is loaded, from literals:
numbers, strings, booleans, `none`, enum members, and lists and maps of these.
Anything computed (a call, a state item, arithmetic on names) belongs in a
helper `fn`.
""", """
const LIMIT = len("abc")
""")

# ------------------------------------------------------------------ WS3xx: types
entry("WS301", "error", "type mismatch",
      """
A value of one type is used where another is expected: an argument, a field
or state assignment, a default, a return value, an element of a literal.
`int` widens to `float`; `none` fits only optional types.
""", """
entity Product { key id: str  price: float = "free" }
""")
entry("WS302", "error", "condition is not a boolean",
      """
`if`, `require`, `and`, `or`, `not`, quantifier bodies, comprehension
filters, invariants and checks need a `bool`. WorldSpec has no truthiness:
write `len(xs) > 0` or `x != none`.
""", """
require user.name else "No name."
""")
entry("WS303", "error", "wrong arguments",
      """
A call has too many or too few arguments, an argument name the callee does
not have, a missing required argument, or positional arguments where named
ones are required (record constructors and solution calls take named
arguments).
""", """
let a = Address("Main St")
""")
entry("WS304", "error", "operator not supported for these types",
      """
The operator is not defined for the operand types: e.g. `"a" - "b"`, `<` on
booleans, `in` on a number, comparing values of unrelated types.
""", """
let x = user.name * 2.5
""")
entry("WS305", "error", "value may be none",
      """
A field, method or index is used on an optional value (`T?`) that may be
`none`. Check it first: `require x != none else "..."`, `if x != none { ... }`,
`x != none and x.f`, or supply a default with `??`.
""", """
tool whoami() -> str { return current_user.name }
""")
entry("WS306", "error", "invalid constraint",
      """
A constraint does not fit its type (a pattern on a number, a range on a
bool), or the range is empty (low above high).
""", """
type Age = int(120..0)
""")
entry("WS307", "error", "wrong type arguments",
      """
`list` and `set` take one type argument and `map` two; other types take none.
""", """
state { index: map[str] }
""")
entry("WS308", "error", "invalid map key type",
      """
Map keys are `str`, `int`, an enum or `json` (ints and strs mixed, as a Python
dict may hold them), so that maps serialise to JSON and hash deterministically.
""", """
state { by_user: map[User, int] }
""")
entry("WS309", "error", "cannot infer the type",
      """
An empty `[]` or `{}` or `none` was bound with `let` without a type. Add
one: `let ids: list[str] = []`.
""", """
let ids = []
""")
entry("WS310", "error", "cannot assign to this",
      """
The target of an assignment cannot be changed: a parameter, a loop or `case`
variable, an entity's key field, a table (use insert/delete), a sequence, a
computed value, or a character of a string.
""", """
tool t(user: User) { user.id = "U9" }
""")
entry("WS311", "error", "lambda not allowed here",
      """
`x => expr` may only be passed to builtins that take a key function
(`sorted`, `min`, `max`).
""", """
let f = count(users, u => u.active)
""")
entry("WS312", "error", "pattern not supported by RE2",
      """
Patterns are matched by RE2, which takes time linear in the text (Python's
backtracking `re` can take exponential time on a pattern like `^(a+)+$`). RE2
has no backreferences (`\\1`), no lookahead or lookbehind (`(?=...)`,
`(?<!...)`), no `\\Z` (write `$` or `\\z`) and repeats at most 1000 times.
""", """
type Twice = str matching /^(a)\\1$/
""")
entry("WS320", "error", "from_json() needs a type",
      """
`from_json(j)` turns a `json` value into the type expected where the result goes,
checking it as data is checked (a value that does not fit fails the call with its
path). It needs that type: declare the local (`let prices: map[str, float] =
from_json(j)`), or pass the result where a type is expected (a parameter, a field,
a return). Rows live in tables, so a json value cannot become an entity: convert it
to the key type and look the row up.
""", """
let prices = from_json(settings["prices"])
""")
entry("WS321", "error", "strptime format not usable",
      """
The format of `strptime(text, format)` is read by Python's `datetime.strptime`,
which refuses a bad directive (`%Q`) or a lone `%` for every text. A format
with `%z` or `%Z` reads a UTC offset or time zone, and datetimes are naive (the
world's local time), so it is refused too.
""", """
let when = strptime(text, "%Y-%m-%Q")
""")
entry("WS322", "error", "given() needs an optional parameter",
      """
`given(p)` is true when the caller of a tool sent the argument `p`, even as
`null`, and false when it left it out: what Python tells apart with a sentinel
default. It exists in tool bodies only (a helper `fn` is called by the world, not
by the agent), and takes a parameter of that tool by name that may be left out
(one with a default, or an optional one).
""", """
tool rename(name: str "The new name.") -> bool "Rename." { return given(name) }
""")
entry("WS323", "error", "field cannot be absent",
      """
`name?: T` declares a record field that may be absent: left out of the record's
JSON (not `null`), read as `none`, built by leaving it out or by giving `none`. So
the field cannot also be optional or `json` (both have a `null` of their own), nor
have a default. Rows are always complete: a field of an entity is declared
optional instead (`name: T?`).
""", """
record Profile { nickname?: str? }
""")
entry("WS324", "error", "attempt() or error_of() cannot hold this",
      """
`attempt(x)` is the value of `x`, or `none` when evaluating `x` fails (Python's
`try: ... except: ...`), and `error_of(x)` is the text it fails with. Nothing in an
expression changes the state, so a failure inside needs nothing undone, except a
draw: `next()` and the random builtins advance the episode's generators, so they
are refused inside (draw first, into a local). `attempt(none)` is always `none`.
""", """
tool roll() -> int? "Roll." { return attempt(random_int(1, 6)) }
""")
entry("WS325", "error", "row[...] out of place",
      """
`row[E]` is entity `E` shown whole: where a tool's result would show only the key of
an `E` (in a list, a map or a record field), it shows the object of the row's fields
instead. A value of `row[E]` is an `E` in every other respect. So it takes an entity
(a record already shows in full), and it belongs only in what a result shows: a
tool's return type and the fields of records it returns. State, entity fields,
parameters and consts are stored or sent by an agent, where an entity is always its
key, so they cannot hold one, not even through a record with a `row[...]` field.
""", """
record MemberInfo { open_loans: list[row[Loan]] }
tool get_member(member: Member) -> MemberInfo "Show a member and their open loans." { ... }
state { last_seen: MemberInfo? }     # stored: holds keys, not rows
""")

# ------------------------------------------------- WS4xx: statements and control flow
entry("WS401", "error", "unreachable code",
      """
A statement follows `return` or `fail` (or an `if`/`match` whose every branch
returns or fails) in the same block, so it can never run.
""", """
tool t() -> int {
  return 1
  fail "never"
}
""")
entry("WS402", "error", "missing return",
      """
A tool or helper declares a return type, but some path through its body ends
without `return` or `fail`.
""", """
fn sign(x: int) -> int {
  if x > 0 { return 1 }
}
""")
entry("WS403", "error", "state changed where it may not be",
      """
Helper functions (`fn`), invariants, checks and defaults may read the state
but not change it: no assignment to state or entities, no insert, delete,
append or remove on them, no `next()` or random draws in invariants and
checks.
""", """
fn bump(u: User) -> int {
  u.visits += 1
  return u.visits
}
""")
entry("WS404", "error", "return value does not fit the tool",
      """
`return value` in a tool without a return type, or a bare `return` in a tool
or helper that declares one.
""", """
tool ping() { return "pong" }
""")
entry("WS405", "error", "not a table or collection",
      """
`insert`/`delete` need a table (`insert x into users`); `append`/`remove`
need a list, a set or (for `remove`) a map.
""", """
insert user into current_user
""")
entry("WS406", "error", "duplicate case",
      """
A `match` lists the same member or variant twice; the second case would
never run.
""", """
match o.status { case pending { } case pending { } }
""")
entry("WS407", "warning", "match is not exhaustive",
      """
A `match` without `else` does not cover every member or variant, so some
values silently do nothing.
""", """
match o.status { case pending { } }
""")
entry("WS408", "warning", "unused local",
      """
A `let` binds a name that is never read.
""", """
let total = 0
""")

# WS410-WS413: constants that would spend the per-call budget (docs/runtime.md)
entry("WS410", "error", "format width too wide",
      """
A format spec (in an f-string or a literal `format(x, spec)`) asks for a width
or precision over 1,000,000 characters, the longest string a call may build;
formatting it would fail every call that reaches it.
""", """
let line = f"{total:2000000000d}"
""")
entry("WS411", "error", "sequence format too wide",
      """
A `sequence` format pads its ids to more than 1,000,000 characters, the longest
string a call may build, so no id could ever be drawn.
""", """
order_ids: sequence "#W{:2000000000d}"
""")
entry("WS412", "error", "string length too long",
      """
`zfill(n)` or `random_digits(n)` with a constant `n` over 1,000,000, the longest
string a call may build; the call would always fail.
""", """
let padded = code.zfill(10 ** 9)
""")
entry("WS413", "error", "range too long",
      """
`range` with constant bounds spans more than 100,000 elements, the longest list
`range` may build; the call would always fail.
""", """
for i in range(10 ** 9) { }
""")

# ---------------------------------------------------- WS5xx: world structure
entry("WS501", "error", "entity key missing or ambiguous",
      """
An entity that is referenced by a field, used as a parameter, or stored in a
table must have exactly one `key` field; the key must be `str`, `int` or an
enum. Records cannot have keys.
""", """
entity Tag { label: str }
entity Post { key id: str  tag: Tag }
""")
entry("WS502", "error", "entity table missing or ambiguous",
      """
Looking an entity up by key (a reference field, an entity parameter, a
reference in data) needs exactly one `table` of that entity in the state.
""", """
entity User { key id: str }
tool greet(user: User) -> str { return user.id }   # no `users: table User`
""")
entry("WS503", "error", "invalid config",
      """
The `config` block has an unknown key or a value of the wrong kind. Keys:
`results` (envscaler, bfcl or tau2), `clock` (ISO datetime), `tick` (int
seconds), `seed` (int), `reward` (how checks combine; its modes are WS626's).
""", """
config { results: openai }
""")
entry("WS504", "error", "declaration outside a world",
      """
`state`, `tool`, `invariant` and `config` belong to a world: the file needs a
`world Name` header. A file has at most one world header and one state and
config block.
""", """
tool ping() -> str { return "pong" }   # no world header in this file
""")
entry("WS505", "error", "invariant or check cannot be evaluated",
      """
Invariants and checks are evaluated on a state snapshot: they cannot draw ids
or random numbers (`next`, `random_*`), and an invariant cannot use `now`
(it would change truth as time passes without any tool call).
""", """
invariant fresh: all m in messages: m.sent_at <= now
""")
entry("WS506", "error", "invalid sequence format",
      """
A `sequence` format must contain exactly one integer field such as `{}` or
`{:03d}` (Python format syntax), e.g. `"MSG{:03d}"`.
""", """
state { ids: sequence "MSG" }
""")
entry("WS507", "warning", "tool without a description",
      """
A tool has no doc string. The doc string is the tool description the agent
reads; without one, agents guess.
""", """
tool archive(conversation: Conversation) { conversation.archived = true }
""")
entry("WS515", "warning", "tool description promises fields its result lacks",
      """
A tool's doc string names a field of one of the world's records or entities (`due_on`
as "due date", `late_fee` as "late fees": underscores read as spaces, plurals and a
trailing `_on`/`_at` read loosely), but no value the tool returns contains that
field: the agent is promised something it will never see. The fields a result
contains are read from the declared return type: a record's fields, the entity a
tool returns and every `row[E]`, recursively; any other entity inside the result
(in a list, a map or a record field) is only its key. Return `row[E]` where the
result should show the row, or say less in the doc.
""", """
tool list_loans(member: Member) -> list[Loan] "List a member's loans with their due dates." {
  return [l for l in loans if l.member == member]   # shows keys only: use list[row[Loan]]
}
""")
entry("WS508", "error", "clock runs out",
      """
After every successful call the clock moves on by `tick` seconds. The clock
must be able to do that for 100,000 calls without passing the last time a
datetime can hold (9999-12-31T23:59:59.999999); otherwise a long episode
ends with every call failing. Start the clock earlier or use a smaller tick.
""", """
config { clock: "9999-12-31T23:59:59"  tick: 1 }
""")
entry("WS509", "error", "tick too large",
      """
`tick` is how long one tool call takes, in seconds: at most 86,400 (a day).
A larger tick is a slip (milliseconds for seconds?) and would run the clock
out of representable time within a few thousand calls.
""", """
config { tick: 100000000000 }
""")
entry("WS510", "error", "custom results without their shapes",
      """
`config { results: custom }` says that the world shapes its own results, and
the `results { success: ...  failure: ... }` block says how; one needs the
other. The success shape is built from `value` (the tool's result as JSON),
the failure shape from `message` (the failure's text).
""", """
config { results: custom }      # and no results { ... } block
""")
entry("WS511", "error", "unknown or missing result shape",
      """
A `results` block has exactly two shapes, `success` and `failure`.
""", """
results { success: value  error: {"error": message} }
""")
entry("WS512", "error", "a result shape is not a literal of its hole",
      """
A result shape is built from literals (numbers, strings, booleans, none, lists,
maps, f-strings) and its hole: `value` for a success, `message` for a failure.
The failure shape holds `message` exactly once: `failed()` recognises a
failure by matching a result against the shape (same keys and constants, any
text where the message stands), so property tests and `failed()` count such
results as failures.
""", """
results { success: value  failure: {"status": false, "at": now} }
""")
entry("WS513", "error", "a private table or sequence",
      """
Until it was retired, this refused `private` before a table or a sequence: only
state values could be private, so a port held private data in a map or a list.
""", """
state { private orders: table Order }
""", retired="""
the checker no longer reports it. Every state item may be `private`, tables
and sequences too (a cache table, an internal index of rows that refer to each
other, an id counter); such an item is stored, hashed, undone and diffed like
any other, and left out of `export_state()`.
""")

entry("WS514", "error", "a state item's loading alias clashes",
      """
`from "key"` after a state item names the key loaded data gives the item
under, instead of its name (the original's own key, e.g. `engineState` for
`engine_state`). The key must not be empty, and it must differ from the
item's own name, from the names of the other state items and from their
aliases: each key of loaded data names one state item.
""", """
state {
  engine_state: str from "engineState" = "stopped"
  engineState: str = ""            # the alias is this item's name
}
""")

# ------------------------------------------------------- WS6xx: tasks and data
entry("WS601", "error", "initial data does not match the schema",
      """
A value in a task's `given` data (inline or from a JSON file) does not match
the declared type or its constraints. The message gives the JSON path of the
bad value, e.g. `$.users[2].phone`.
""", """
given { users: [{id: "U1", name: 42}] }
""")
entry("WS602", "error", "unknown key in data",
      """
Initial data names a state item or a field that the world does not declare.
A state item declared with an alias (`engine_state: str from "engineState"`)
loads from the alias only: its own name is not a key of loaded data, and data
giving both is refused. A field with an alias may be given under either name,
but not under both.
""", """
given { userz: [] }
""")
entry("WS603", "error", "missing field in data",
      """
A row or record in initial data lacks a field that has no default and is not
optional.
""", """
given { users: [{id: "U1"}] }    # name is required
""")
entry("WS604", "error", "data file cannot be read",
      """
`given "file.json"` names a file that does not exist (paths are relative to
the spec file) or that is not valid JSON.
""", """
given "data/seed.jsn"
""")
entry("WS605", "error", "data breaks keys or references",
      """
Initial data has two rows with the same key, a row stored under a key that
differs from its key field, or a reference to a row that does not exist.
""", """
given { messages: [{id: "M1", sender: "U404"}] }
""")
entry("WS606", "error", "invalid solution call",
      """
A reference solution calls a tool with arguments the tool does not accept:
unknown or missing parameters, or values of the wrong type. Solution
arguments may be written as the agent would send them, in JSON (entities by
key, `"economy"` for an enum member, ISO text for a date, an object for a
record), checked by the rules of tool arguments; or as typed expressions
(`Cabin.economy`, `date("2024-05-01")`, `Address(city: "Austin", ...)`).
""", """
solution { cancel_order(order_id: 7) }          # the order id is a str
solution { book(cabin: "econmy") }              # not a member of the enum
""")
entry("WS607", "error", "unknown frame target",
      """
`only changes` lists a state item, or a `table.field`, that does not exist.
""", """
only changes orders.stauts
""")
entry("WS608", "error", "invalid check weight",
      """
Check weights must be positive numbers.
""", """
check paid weight 0: orders["#W1"].paid
""")
entry("WS609", "warning", "task is incomplete",
      """
A task has no instruction or no checks, so it cannot be given to an agent or
cannot be graded.
""", """
task empty in Shop { }
""")

# --------------------------------------------- WS61x: tasks, validated by running them
entry("WS610", "error", "reference solution fails",
      """
A call of the task's reference solution fails when the solution is replayed on
the task's initial data: the task cannot be solved as written, or the solution
is wrong. The message gives the tool's own error.
""", """
solution { cancel_order(order: "#W404") }   # no such order in the data
""")
entry("WS611", "error", "check fails after the reference solution",
      """
After the reference solution has run, a check item is still false (or raises):
either the check or the solution is wrong.
""", """
check cancelled: orders["#W1"].status == cancelled
solution { }                                # does nothing
""")
entry("WS612", "error", "reference solution breaks the frame",
      """
The reference solution changes something that `only changes` does not allow.
""", """
only changes orders.status
solution { update_address(user: "U1", city: "Paris") }
""")
entry("WS613", "warning", "check already holds at the start",
      """
A check item is already true on the initial state, so it rewards doing nothing.
Checks should become true because of the agent's work. A check that reads what
the reference solution changes (a field of a table's rows, the set of its rows, a
state item) is not reported: it guards the rows the task's work must leave alone
(`others_kept: not orders["#W2"].cancelled` while the task cancels `#W1`), which a
frame, naming whole fields, cannot say. A check on what the solution leaves alone
is reported: the frame already keeps it, or nothing could ever make it false.
""", """
check has_users: len(users) > 0
""")
entry("WS614", "error", "doing nothing earns the full reward",
      """
On the initial state, before any call, the task already scores 1: an agent that
does nothing would pass. When leaving everything as it is *is* the right outcome (the
request breaks the policy, or needs no change), say so with `only changes nothing`: in
such a restraint task any change zeroes the reward, and validation accepts it.
""", """
task trivial in Shop { instruction "Relax." check ok: true }
""")
entry("WS615", "warning", "a key in the task is not in the data",
      """
A check looks up a row by a literal key (`orders["#W9"]`) that exists neither
in the initial data nor after the reference solution, or the instruction names
an id that no table holds: the task probably refers to data it does not have.
A word of the instruction is taken for an id when it looks like the keys: it has
the letter head of one (`#W`, `L`), or, starting with a digit, exactly the pattern
of digits and letters of one (`199` among rooms `101`...). Dates, times, amounts,
ordinals (`1st`), ranges (`July 20-22`), numbers with separators (`27,800 km`),
phone numbers and e-mail addresses are never taken for ids.
""", """
check done: orders["#W9999999"].status == cancelled
""")
entry("WS616", "error", "matches_solution() without a solution",
      """
A check calls `matches_solution()`, which compares the final state with the state
the task's reference solution leaves, but the task has no `solution` block.
""", """
check same: matches_solution()    # and no solution { ... } in the task
""")
entry("WS617", "error", "text in data is not valid Unicode",
      """
A string (or an object key) in a task's data holds a lone surrogate such as
`"\\ud800"`: half of a UTF-16 pair, which is not a character, cannot be written
as UTF-8 and would make hashing the state fail. The message gives its JSON path.
Tool arguments with one fail the call the same way.
""", """
given { users: [{id: "U1", name: "Ann\\ud800"}] }
""")
entry("WS620", "error", "answer check without a reference reply",
      """
A check reads the conversation (`reply` or `replies`), and the task has a
`solution`, but the solution says nothing: add the reference answer with
`reply "..."` so that validation can show the check is passable.
""", """
check told: reply.contains("$54.04")
solution { get_order(order: "#W1") }          # no reply "..."
""")
entry("WS621", "warning", "reference reply that no check reads",
      """
The solution has a `reply "..."`, but no check of the task reads `reply` or
`replies`: the reply grades nothing. Add an answer check, or drop the reply.
""", """
check cancelled: orders["#W1"].status == cancelled
solution { cancel_order(order: "#W1") reply "Done." }
""")
entry("WS622", "error", "answer check fails on the reference reply",
      """
After the reference solution has run, a check that reads the conversation is
false for the solution's own `reply` text: the check or the reference reply is
wrong (a typo in an amount, a different spelling).
""", """
check told: reply.contains("$54.04")
solution { reply "That is $54.40." }
""")
entry("WS623", "error", "on load refuses a task's data",
      """
The world's `on load` block failed (a `fail`, a failing `require`, a duplicate
key, a spent budget) on the data of a task, so no episode of the task can
start. The message is the failure's.
""", """
on load { require len(orders) > 0 else "No orders given." }
task empty in Shop { given { } ... }
""")
entry("WS624", "error", "solution uses a value the agent was never shown",
      """
A call of the task's reference solution passes a value that names something (an
entity's key, or any string) which the agent could not have seen before that call:
it is in none of the instruction, the user's `persona` or `known` information (what
is `unknown` does not count), the world's policy, the tool definitions (names,
descriptions, parameter docs, enum values) or the results of the solution's earlier
calls (their text, and the strings, keys and numbers inside JSON results). Such a
task can only be solved by guessing. Matching ignores case and runs of whitespace,
and is token-bounded: `"L002"` is not shown by `"L0021"`.

Numbers that are not entity keys, booleans, dates, datetimes, durations and enum
members are exempt (the agent computes or states them), and so is text the agent
writes in its own words, when its parameter or record field is marked `freeform`:
`body: str(1..1000) freeform "The message text."`.

To fix: return the value from a read tool the solution calls first, add a read tool
that shows it, name it in the instruction or `known`, or mark a genuine free-text
parameter `freeform`.
""", """
tool list_loans(member: Member) -> list[str] { ... }   # loan ids only, no copies
solution {
  list_loans(member: "M001")
  return_copy(copy: "C0003")    # the copy's barcode was never shown
}
""")
entry("WS626", "error", "unknown reward mode",
      """
`config { reward: ... }` and a task's `reward ...` name how the task's checks
combine into its reward: `weighted` (the default: the weighted share of the
checks that hold), `mean` (the share of the checks that hold, each counting
the same) or `all` (1 when every check and the frame hold, else 0: the product
of 0/1 components, as tau2-bench computes its reward).
""", """
task cancel in Shop {
  reward all_or_nothing     # the mode is `all`
  ...
}
""")
entry("WS625", "warning", "check weight that the reward mode ignores",
      """
A check has a `weight`, but its task's checks combine by `mean` or `all`
(the task's `reward`, else the world's `config { reward: ... }`), where every
check counts the same: the weight changes nothing. Drop the weight, or use
`reward weighted` for the task.
""", """
task cancel in Shop {
  reward mean
  check cancelled weight 2: orders["#W1"].status == cancelled
  ...
}
""")
entry("WS409", "error", "break or continue outside a loop",
      """
`break` and `continue` belong inside a `for` loop; to leave a tool or helper,
use `return` (or `fail`).
""", """
tool t() {
  break
}
""")
