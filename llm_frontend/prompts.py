"""Every prompt the front end sends.

The prompts are plain functions of their inputs (no clock, no randomness), so
the same request always gets the same messages, and a test can read them.
What each carries:

- :func:`plan_world_messages`: the description, the language's vocabulary in a
  few lines, and what a plan must contain; the reply is a :class:`WorldPlan`
  (structured output, validated with pydantic).
- :func:`write_world_messages`: the condensed language reference (generated
  from ``docs/language.md``), an example world, the rules a synthesised world
  must follow, the description and the plan.
- :func:`write_task_messages`: the reference, an example task, the rules of a
  good task (inline data, a multi-step state-changing instruction with as few
  ids as possible, checks, a frame and a reference solution), the world's text,
  the tasks already written (to be different) and a tool to focus on.
- the repair requests (``*_feedback``): what was wrong with the last reply, as
  compiler diagnostics in JSON, property-test findings or validation problems, sent
  in :func:`~worldspec.services.world_replies.repair_messages` (the conversation so
  far plus the last reply; only the latest attempt is kept, so a long repair does
  not grow the prompt).

The model writes ``.world`` text only;
:func:`~worldspec.services.world_replies.extract_world_code` takes it out of the reply
(a fenced block, or the bare text) and nothing else from the reply is used. Those two,
the language reference the prompts carry and the diagnostics as the model reads them are
shared with ``port`` and live in ``worldspec.services``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from worldspec.services.language_reference_text import EXAMPLE_WORLD, LANGUAGE_REFERENCE
from worldspec.services.model_client import Message

__all__ = [
    "EXAMPLE_SEEDED_WORLD",
    "EntityPlan",
    "FieldPlan",
    "ToolPlan",
    "WORLD_SIZES",
    "WorldPlan",
    "WorldSize",
    "compiler_feedback",
    "coverage_feedback",
    "plan_world_messages",
    "property_feedback",
    "sample_task_feedback",
    "structure_feedback",
    "task_feedback",
    "write_task_messages",
    "write_world_messages",
]

_ROLE = ("You write specs in WorldSpec, a small typed language for the stateful tool "
         "environments LLM agents are trained and evaluated in. You write `.world` text only: "
         "a compiler checks every file and tells you precisely what is wrong.")

_VOCABULARY = """\
WorldSpec in brief: `entity` (a keyed row type stored in a `table`), `record` (a value type),
`enum`, tagged `union`, constrained types (`int(0..100)`, `str(1..80)`, `str matching /re/`),
`state { ... }` (tables, `sequence` id generators, scalars such as `current_user: User?`),
`invariant` (a rule checked after every tool call), `tool` (typed parameters, `require ...
else "message"` preconditions, statements that change state, a typed result) and `fn` (a pure
helper). The clock (`now`) and the random numbers are the world's own: nothing is
nondeterministic.

Types to plan with (write them in the `type` of each field, parameter and state item):
- `str`, `int`, `float`, `bool`; constrained: `int(1..10)`, `float(0.0..)`, `str(1..80)`,
  `str matching /^[A-Z]{3}[0-9]{4}$/`, `list[str](..10)`.
- A **reference** to another row is typed by its entity: `customer: Customer`, `spot: Spot?`.
  It stores the key and reads the row (`booking.customer.name`); never a `str` holding an id.
- Time: `date` (a calendar day), `datetime` (a day and a time), `duration` (`days(3)`,
  `hours(2)`); never day numbers or date strings.
- Fixed choices are an `enum` (`enum Status { open, closed }`), never free strings.
- `T?` (optional), `list[T]`, `set[T]`, `map[K, V]`, a `record` for a structured value
  (an address), a `union` of records for one-of values (a payment method).
- Tables (`table Customer`), id generators (`sequence "B{:03d}"`) and scalars in `state`."""

#: A small complete file in the shape a synthesised world has: the world, then a sample task
#: whose `given` is the seed data. Every value form (references, enums, dates, datetimes,
#: records, sequences) appears in the data and in the solution.
EXAMPLE_SEEDED_WORLD = """\
world Rentals "A bike rental desk: customers book bikes for a day."

config { results: envscaler  clock: "2024-05-01T09:00:00" }

enum Size { small, medium, large }

enum BookingStatus { booked, cancelled, returned_late = "returned late" }

record Contact { phone: str matching /^\\+[0-9]{7,15}$/  email: str? = none }

entity Customer { key id: str  name: str(1..80)  contact: Contact }

entity Bike { key id: str  size: Size  daily_rate: float(0.0..) }

entity Booking {
  key id: str = next(booking_ids)
  customer: Customer                     # a reference: stores the customer's key
  bike: Bike
  day: date
  status: BookingStatus = booked
  booked_at: datetime = now
}

state {
  customers: table Customer
  bikes: table Bike
  bookings: table Booking
  booking_ids: sequence "BK{:03d}"
}

invariant one_booking_per_bike_and_day "A bike is booked at most once a day.":
  all b in bookings: b.status != booked or
    count([o for o in bookings if o.bike == b.bike and o.day == b.day and o.status == booked]) == 1

tool book_bike(customer: Customer "The customer id.", bike: Bike "The bike id.",
               day: date "The day, e.g. 2024-05-03.") -> Booking
  "Book a bike for one day."
{
  require day >= now.date() else "Bookings cannot be in the past."
  require not (exists o in bookings: o.bike == bike and o.day == day and o.status == booked)
    else f"Bike {bike.id} is already booked on {day}."
  let booking = Booking(customer: customer, bike: bike, day: day)
  insert booking into bookings
  return booking
}

tool update_contact(customer: Customer "The customer id.",
                    contact: Contact "The new contact details.") -> Customer
  "Replace a customer's contact details."
{
  customer.contact = contact
  return customer
}

tool find_bikes(size: Size "The size wanted.") -> list[Bike]
  "The bikes of one size."
{
  return [b for b in bikes if b.size == size]
}

tool find_customers(name: str "Part of the name; case does not matter.") -> list[Customer]
  "The customers whose name contains the text."
{
  return [c for c in customers if c.name.lower().contains(name.lower())]
}

task book_a_large_bike in Rentals "Book a free large bike and update a phone number." {
  given {
    customers: [{id: "C1", name: "Ana Ruiz", contact: {phone: "+34600111222"}},
                {id: "C2", name: "Ben Ode",
                 contact: {phone: "+44700333444", email: "ben@example.com"}}],
    bikes: [{id: "BK-L1", size: "large", daily_rate: 25.0},
            {id: "BK-L2", size: "large", daily_rate: 30.0},
            {id: "BK-S1", size: "small", daily_rate: 15.0}],
    bookings: [{id: "BK001", customer: "C2", bike: "BK-L1", day: "2024-05-03",
                booked_at: "2024-04-28T10:00:00"}],
    booking_ids: 1,
  }
  instruction "I'm Ana Ruiz. Book me a large bike for May 3rd; my new phone is +34600999888."
  check booked "Ana has a large bike on May 3rd.":
    exists b in bookings: b.customer == "C1" and b.day == date("2024-05-03") and
      b.bike.size == large and b.status == booked
  check phone "Ana's new number is on file.": customers["C1"].contact.phone == "+34600999888"
  only changes bookings, booking_ids, customers.contact
  solution {
    find_customers(name: "Ana Ruiz")     # ids come from results: the user knows none
    find_bikes(size: large)
    book_bike(customer: "C1", bike: "BK-L2", day: date("2024-05-03"))
    update_contact(customer: "C1", contact: Contact(phone: "+34600999888"))
  }
}
"""

_VALUE_FORMS = """\
How values are written (the compiler refuses the other forms):
- In `given { ... }` data, values are JSON-like: a table is a list of rows with their keys;
  a reference is the key (`customer: "C1"`); an enum member is its string (`size: "large"`,
  `status: "returned late"`); a `date` is ISO text (`"2024-05-03"`), a `datetime` too
  (`"2024-05-03T10:00:00"`, no time zone); a `duration` is seconds; a record is an object
  (`contact: {phone: "+34600111222"}`); a union value is an object with its tag field
  (`{source: "gift_card", id: "g1", balance: 10.0}`); a `sequence` is its current counter
  (`booking_ids: 1`: the next id is number 2).
- In a `solution { ... }` call, each argument is an expression of the parameter's type: an
  entity parameter takes the key (`customer: "C1"`); an enum parameter takes the member, bare
  or qualified (`size: large`, `reason: CancelReason.ordered_by_mistake`), never a string; a
  date is `date("2024-05-03")`, a datetime `datetime("2024-05-03T10:00:00")`, a duration
  `days(2)` or `hours(3)`; a record is built by name with named fields
  (`contact: Contact(phone: "+34600999888")`); lists and maps are literals (`[1, 2]`,
  `{"V2002": 1}`).
- Checks compare with the same expression forms: `b.day == date("2024-05-03")`,
  `b.status == booked`, `customers["C1"].contact.phone == "+34600999888"`."""

_WORLD_RULES = """\
Rules for the file you write:
- One self-contained file. It starts with `world Name "One-sentence description."`
  and has no `import` lines.
- Use `config {{ results: envscaler }}`.
- Every entity has exactly one `key` field. Rows that tools create get their key from a
  `sequence` in the state (`key id: str = next(order_ids)`).
- Write the business rules twice: as `invariant`s over the whole state, and as `require ...
  else "clear message"` preconditions in each tool, so that no call can break an invariant
  (a call that would is a bug the property tests will find).
- {tools}: look-ups that only read and actions that change state. Every tool and every
  parameter has a doc string: they are what the agent sees. Parameters that name an existing
  row have the entity as their type (the agent passes the key).
- Every entity can be looked up: a read tool that shows one row by its key, and a read tool
  that finds or lists rows by what a user knows (a name, an email, a date, a status), so that
  an agent told "Ana's loan" can find its id.{rich}
- After the world, in the same file, write {sample_tasks} sample task(s) in the world,
  `task name in Name "doc" {{ ... }}`, like the example's. Their inline `given {{ ... }}` is the
  world's **seed data**: several rows in every table, with references between them, chosen so
  that every state-changing tool can succeed from it (a booking tool needs a free item, a
  return tool something borrowed). Each sample task has an `instruction`, `check`s that its
  `solution` makes true, an `only changes ...` frame and a `solution` of tool calls.
- The world is then tested with random tool calls that start from each sample task's data.
  Every state-changing tool must succeed at least once in those calls: a tool that never
  succeeds is sent back to you, as is any call that breaks a rule.
- Reply with the complete file in one ```world code block and nothing else."""

_TASK_RULES = """\
Rules for the task you write:
- Exactly one `task NAME in {world} {{ ... }}` block and nothing else: no `import`, no other
  declarations. NAME is new snake_case.
- `given {{ ... }}` with inline data only (no file names): every table the task needs, rows
  with their keys, written in the forms above. Start from the seed data of the world's sample
  tasks and change it to fit your task. The data must satisfy the world's types, constraints
  and invariants.
- `instruction "..."`: the user's request in their own voice. It asks for several steps
  that change the state. It names things the way a user knows them (names, emails, dates,
  descriptions): the instruction may name **at most {max_ids} id(s)** of rows (keys such as
  "B002"); the agent looks the others up with the tools.
- Two to five `check name "doc": condition` items over the final state, each false before
  the work is done and true after it (compare with `initial.` where useful).
- `only changes ...`: the frame, listing exactly the state the work may change.
- `solution {{ ... }}`: the reference tool calls, in order, with named arguments,
  **at least {min_calls} calls**, at least one of them changing the state. It must make
  every check true and stay within the frame; doing nothing must not make every check
  true. Every id or text a call passes must be shown to the agent before that call: in the
  instruction, `known`, a tool description, or the result of an earlier call (look ids up
  with a read tool first); numbers, dates, enum members and `freeform` text are
  exempt.{conversational}
- Reply with the task in one ```world code block and nothing else."""

_CONVERSATIONAL = """
- This is a conversational task: add `persona "..."` (who the simulated user is and how they
  talk), `known "..."` (what the user can tell the agent) and `unknown "..."` (what the user
  does not know and the agent must find out)."""


# ------------------------------------------------------------------- plan
class FieldPlan(BaseModel):
    """A field, parameter or state item: its name, its WorldSpec type and what it means."""

    name: str
    type: str
    note: str = ""


class EntityPlan(BaseModel):
    """A kind of row kept in a table."""

    name: str = Field(description="PascalCase entity name")
    key: str = Field(description="the name of the key field")
    fields: list[FieldPlan]
    description: str = ""


class ToolPlan(BaseModel):
    """A tool the agent can call."""

    name: str = Field(description="snake_case tool name")
    description: str
    parameters: list[FieldPlan] = []
    reads_only: bool = False
    effect: str = Field("", description="what the tool changes in the state")
    fails_when: list[str] = Field([], description="preconditions, as the error messages")


class WorldPlan(BaseModel):
    """The design of a world, made before its spec is written."""

    world_name: str = Field(description="PascalCase world name")
    summary: str
    entities: list[EntityPlan] = Field(min_length=1)
    state: list[FieldPlan] = Field(description="tables, id sequences and scalar state")
    rules: list[str] = Field(description="invariants that must always hold")
    tools: list[ToolPlan] = Field(min_length=1)
    seed_data: list[str] = Field([], description="the rows of a starting state, one line per "
                                                 "table, such that every tool that changes "
                                                 "state can succeed from it")


@dataclass(frozen=True)
class WorldSize:
    """How big a synthesised world is asked to be (``synth world --size``), and the least
    it must have to be accepted (read-only and state-changing tools, state items)."""

    name: str
    #: the planner's sentence on size
    plan: str
    #: the writer's rule on the tools
    tools: str
    #: the writer's further rules (a leading newline each)
    rules: str
    min_read_tools: int = 0
    min_write_tools: int = 0
    min_state_items: int = 0


#: ``small``: what ``synth world`` wrote so far; ``rich``: EnvScaler's richness (its release
#: has a mean of 10.4 read and 8.1 state-changing tools and 21 state categories a world)
WORLD_SIZES: dict[str, WorldSize] = {
    "small": WorldSize(
        "small",
        "Keep it small and coherent: 2 to 6 entities and 5 to 12 tools, enough for multi-step "
        "tasks.",
        "Between 5 and 12 tools", ""),
    "rich": WorldSize(
        "rich",
        "Make it rich, as a real back office is: 5 to 9 entities with 5 to 10 fields each, "
        "references between them, at least 10 state items (tables, id sequences, settings "
        "and scalars), at least 8 tools that only read (a look-up by key and a search or "
        "listing by what a user knows for every entity) and at least 7 tools that change "
        "state, each with its own rules; seed data of at least 4 rows in every table.",
        "At least 8 tools that only read and at least 7 that change state (15 to 24 in all)",
        "\n- Rich state: 5 to 9 entities of 5 to 10 fields, references between them, at least "
        "10 state items (tables, id sequences, settings, the signed-in user); the seed data "
        "has at least 4 rows in every table.",
        min_read_tools=8, min_write_tools=7, min_state_items=10),
}


def plan_world_messages(description: str, size: WorldSize = WORLD_SIZES["small"]
                        ) -> list[Message]:
    """Ask for a :class:`WorldPlan` of the environment ``description`` asks for, as big as
    ``size`` says."""
    user = (f"Design a tool environment for this description:\n\n{description.strip()}\n\n"
            "Plan its entities (each with its key field and typed fields: references to other "
            "entities, dates and enums where they fit), its state (tables, id sequences, "
            "scalars such as the signed-in user), its rules (invariants that must always "
            "hold), its tools (parameters, whether they only read, what they change and when "
            "they fail) and its seed data (the rows a starting state holds, so that every "
            "tool that changes state can succeed from it). Give every entity a way to be "
            "looked up: a read tool by its key and one that finds or lists its rows by what a "
            f"user knows (a name, an email, a date). {size.plan}")
    return [{"role": "system", "content": f"{_ROLE}\n\n{_VOCABULARY}"},
            {"role": "user", "content": user}]


def _examples() -> str:
    return (f"# Example world (an excerpt)\n\n```world\n{EXAMPLE_WORLD}```\n\n"
            "# Example of a whole file: a small world and its sample task with seed data\n\n"
            f"```world\n{EXAMPLE_SEEDED_WORLD}```\n\n{_VALUE_FORMS}")


def _world_system(sample_tasks: int, size: WorldSize) -> str:
    rules = _WORLD_RULES.format(sample_tasks=f"at least {max(1, sample_tasks)}",
                                tools=size.tools, rich=size.rules)
    return f"{_ROLE}\n\n{LANGUAGE_REFERENCE}\n{_examples()}\n\n{rules}"


def write_world_messages(description: str, plan: WorldPlan | None, *,
                         sample_tasks: int = 1, size: WorldSize = WORLD_SIZES["small"]
                         ) -> list[Message]:
    """Ask for the ``.world`` file of ``description``, following ``plan`` when there is one,
    with at least ``sample_tasks`` sample tasks whose data seeds the world, as big as
    ``size`` says."""
    parts = [f"Description of the environment:\n\n{description.strip()}"]
    if plan is not None:
        parts.append("The plan to follow:\n\n```json\n"
                     f"{json.dumps(plan.model_dump(), indent=1, ensure_ascii=False)}\n```")
    parts.append("Write the complete `.world` file.")
    return [{"role": "system", "content": _world_system(sample_tasks, size)},
            {"role": "user", "content": "\n\n".join(parts)}]


# ------------------------------------------------------------------- tasks
def write_task_messages(*, world_name: str, world_file: str, world_text: str,
                        written: Sequence[tuple[str, str]], focus_tool: str | None,
                        conversational: bool, min_calls: int = 2,
                        max_ids: int = 2) -> list[Message]:
    """Ask for one new task in ``world_name``.

    ``written`` holds ``(name, instruction)`` of the tasks already accepted, so
    the new one differs; ``focus_tool`` is a state-changing tool it should use;
    ``min_calls`` and ``max_ids`` are the limits the task is then held to.
    """
    rules = _TASK_RULES.format(world=world_name, min_calls=min_calls, max_ids=max_ids,
                               conversational=_CONVERSATIONAL if conversational else "")
    system = (f"{_ROLE}\n\n{LANGUAGE_REFERENCE}\n# Example of a whole file: a small world "
              f"and a task in it\n\n```world\n{EXAMPLE_SEEDED_WORLD}```\n\n{_VALUE_FORMS}"
              f"\n\n{rules}")
    parts = [f"The world, in the file `{world_file}`:\n\n```world\n{world_text.rstrip()}\n```"]
    if written:
        shown = "\n".join(f"- {name}: {' '.join(text.split())[:200]}" for name, text in written)
        parts.append(f"Tasks already written (write a different one, with a new name):\n{shown}")
    if focus_tool:
        parts.append(f"Make the task need the tool `{focus_tool}`, among others.")
    parts.append(f"Write one new task in {world_name}.")
    return [{"role": "system", "content": system},
            {"role": "user", "content": "\n\n".join(parts)}]


# ------------------------------------------------------------------ repair
def compiler_feedback(problems: Sequence[dict[str, Any]], what: str) -> str:
    """The repair request for compiler diagnostics (``problems`` as JSON objects)."""
    return (f"The compiler rejected the {what}. Its diagnostics, as JSON (line and column "
            "refer to the text you wrote; `source` is that line):\n\n```json\n"
            f"{json.dumps(list(problems), indent=1, ensure_ascii=False)}\n```\n\n"
            f"Fix every error and reply with the complete corrected {what} in one ```world "
            "code block.")


def property_feedback(findings: Sequence[dict[str, Any]]) -> str:
    """The repair request for what the property tests found."""
    return ("The world compiles, but random tool calls broke properties every world must "
            "have. Each finding comes with the shortest call sequence that shows it:\n\n"
            f"```json\n{json.dumps(list(findings), indent=1, ensure_ascii=False)}\n```\n\n"
            "Usually a tool lacks a `require` precondition that keeps an invariant true, or a "
            "result does not match its declared type. Fix the spec and reply with the complete "
            "corrected file in one ```world code block.")


def coverage_feedback(problems: Sequence[dict[str, Any]]) -> str:
    """The repair request for state-changing tools that random calls never got to succeed."""
    return ("The world compiles and breaks no property, but some tools that change the state "
            "never succeeded in the random calls made from your sample tasks' data, so nothing "
            "they do was tested:\n\n"
            f"```json\n{json.dumps(list(problems), indent=1, ensure_ascii=False)}\n```\n\n"
            "Make each of them able to succeed from the seed data: give the sample tasks' "
            "`given` the rows these tools need (in the state their preconditions ask for), or "
            "fix a precondition that can never hold. Reply with the complete corrected file "
            "in one ```world code block.")


def sample_task_feedback(problems: Sequence[dict[str, Any]]) -> str:
    """The repair request for sample tasks whose solutions do not validate."""
    return ("The world compiles, but its sample tasks do not validate: each reference solution "
            "was replayed on its task's data (line numbers refer to the text you wrote):\n\n"
            f"```json\n{json.dumps(list(problems), indent=1, ensure_ascii=False)}\n```\n\n"
            "Fix the data, the checks, the frame or the solution (or the tool they show is "
            "wrong) and reply with the complete corrected file in one ```world code block.")


def task_feedback(problems: Sequence[dict[str, Any]]) -> str:
    """The repair request for a task that checks but does not validate."""
    return ("The task compiles, but running it shows these problems (its reference solution "
            "was replayed on its data; line numbers refer to the text you wrote):\n\n"
            f"```json\n{json.dumps(list(problems), indent=1, ensure_ascii=False)}\n```\n\n"
            "Fix them (the data, the checks, the frame or the solution) and reply with the "
            "complete corrected task in one ```world code block.")


def structure_feedback(problems: Sequence[dict[str, Any]], what: str) -> str:
    """The repair request for a reply that is not the kind of text asked for."""
    shown = "\n".join(f"- line {p['line']}: {p['message']}" if p.get("line")
                      else f"- {p['message']}" for p in problems)
    return (f"The {what} cannot be used as written:\n{shown}\n\nFix this and reply with the "
            f"complete corrected {what} in one ```world code block.")
