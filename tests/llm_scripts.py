"""Scripted model output for the synth tests: plans, worlds and tasks, good and broken.

The texts are what a model might answer; the tests feed them through
:mod:`llm_server` so the whole front end (client, prompts, extraction, the
compiler, the property tests, task validation) runs for real.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["LIBRARY_WORLD", "PLAN_JSON", "VAULT_WORLD", "corpus_responder", "counter_task",
           "counter_world", "fenced", "library_task", "parking_world", "world_named"]

PLAN_JSON = json.dumps({
    "world_name": "Counter",
    "summary": "A counter that goes up and down.",
    "entities": [{"name": "Step", "key": "id", "fields": [{"name": "id", "type": "str"}]}],
    "state": [{"name": "total", "type": "int", "note": "the count"}],
    "rules": ["the total never goes below zero"],
    "tools": [{"name": "increment", "description": "Add to the counter."},
              {"name": "decrement", "description": "Take one away."}],
})


def counter_world(name: str = "Counter", *, guarded: bool = True, typo: bool = False,
                  type_error: bool = False, sample: bool = True) -> str:
    """A tiny world with a sample task (its seed data: the total is 3). ``guarded=False``
    lets ``decrement`` break the invariant (a property failure); ``typo`` and
    ``type_error`` make compile errors; ``sample=False`` leaves the sample task out."""
    guard = '  require total > 0 else "The counter is at zero."\n' if guarded else ""
    added = "byy" if typo else ('"one"' if type_error else "by")
    task = f'''
task count_up in {name} "Add two, then take one." {{
  given {{ total: 3 }}
  instruction "Add two to the counter, then take one away."
  check four: total == 4
  only changes total
  solution {{
    increment(by: 2)
    decrement()
  }}
}}
''' if sample else ""
    return f'''world {name} "A counter that can go up and down."

config {{ results: envscaler }}

state {{
  total: int = 0
}}

invariant not_negative "The counter never goes below zero.":
  total >= 0

tool increment(by: int(1..10) "How much to add.") -> int
  "Add to the counter."
{{
  total += {added}
  return total
}}

tool decrement() -> int
  "Take one from the counter."
{{
{guard}  total -= 1
  return total
}}
{task}'''


def world_named(description: str) -> str:
    """A valid counter world named after the number in ``description`` (``Counter7``)."""
    match = re.search(r"(\d+)", description)
    return counter_world(f"Counter{match.group(1) if match else ''}")


def fenced(code: str, prose: bool = True) -> str:
    """``code`` in a ```world fence, with chatter around it when ``prose``."""
    if not prose:
        return f"```world\n{code}```"
    return f"Here is the file you asked for:\n\n```world\n{code}```\n\nLet me know if it helps!"


LIBRARY_WORLD = '''world Library "A small lending library: members borrow and return books."

config { results: envscaler }

entity Member {
  key id: str
  name: str(1..80)
  email: str
}

entity Book {
  key id: str
  title: str(1..200)
  borrower: Member? = none
}

entity Loan {
  key id: str = next(loan_ids)
  book: Book
  member: Member
  returned: bool = false
}

state {
  members: table Member
  books: table Book
  loans: table Loan
  loan_ids: sequence "L{:03d}"
}

invariant one_open_loan "A book is lent to at most one member at a time.":
  all b in books: count([l for l in loans if l.book == b and not l.returned]) <= 1

tool find_member(email: str "The member's email.") -> str
  "Find a member's id from their email."
{
  let found = [m for m in members if m.email == email]
  require len(found) > 0 else f"No member has the email {email}."
  return found[0].id
}

tool find_book(title: str "Part of the title; case does not matter.") -> list[str]
  "Find books by title: their ids."
{
  return [b.id for b in books if b.title.lower().contains(title.lower())]
}

tool borrow_book(member: Member "The member id.", book: Book "The book id.") -> Loan
  "Lend a book to a member."
{
  require book.borrower == none else f"Book {book.id} is already lent."
  book.borrower = member
  let loan = Loan(book: book, member: member)
  insert loan into loans
  return loan
}

tool return_book(book: Book "The book id.") -> Book
  "Take a lent book back."
{
  require book.borrower != none else f"Book {book.id} is not lent."
  for l in loans {
    if l.book == book and not l.returned {
      l.returned = true
    }
  }
  book.borrower = none
  return book
}
'''


def library_task(name: str = "swap_books", *, title: str = "Emma", broken_check: bool = False,
                 persona: bool = False, extra: str = "", instruction: str | None = None,
                 guess_dune: bool = False) -> str:
    """A task for :data:`LIBRARY_WORLD`. ``broken_check`` makes a check the solution cannot
    make true (the task does not validate); ``guess_dune`` makes the solution return Dune by
    an id no earlier call showed (WS624)."""
    wanted = "none" if broken_check else '"M001"'
    said = instruction or (f"I'm Ada (ada@example.com). Please return my copy of Dune and "
                           f"lend me {title}.")
    conversation = ('  persona "Ada, a retired mathematician who is brief."\n'
                    '  known "Her email and the two titles."\n'
                    '  unknown "Any ids."\n') if persona else ""
    look_up = "" if guess_dune else '    find_book(title: "dune")\n'
    return f'''task {name} in Library "Return one book and borrow another." {{
  given {{
    members: [{{id: "M001", name: "Ada Lovelace", email: "ada@example.com"}}],
    books: [{{id: "B001", title: "Dune", borrower: "M001"}},
            {{id: "B002", title: "{title}"}}, {{id: "B003", title: "Ulysses"}}],
    loans: [{{id: "L001", book: "B001", member: "M001"}}],
    loan_ids: 1,
  }}
  instruction "{said}"
{conversation}{extra}  check dune_back "Dune is back on the shelf.": books["B001"].borrower == none
  check lent "Ada has the new book.": books["B002"].borrower == {wanted}
  only changes books.borrower, loans, loan_ids
  solution {{
    find_member(email: "ada@example.com")
{look_up}    return_book(book: "B001")
    find_book(title: "{title.lower()}")
    borrow_book(member: "M001", book: "B002")
  }}
}}
'''


def parking_world(*, guarded: bool = True, open_garage: bool = True, sample: bool = True) -> str:
    """A garage: vehicles park in spots and move between them; at most one vehicle per spot.

    ``guarded=False`` plants the bug of a ``move_vehicle`` that does not check that the new
    spot is free (the invariant catches it: a property failure). ``open_garage=False`` gives
    the sample task a closed garage and no tool opens it, so ``move_vehicle`` and ``leave``
    never succeed (the vacuous gate). ``sample=False`` leaves the sample task (the seed data)
    out, so exploration starts from an empty garage where no write tool can succeed.
    """
    guard = ('  require not (exists v in vehicles: v.spot == spot) else '
             'f"Spot {spot.id} is taken."\n') if guarded else ""
    task = f'''
task park_and_move in Garage "Park a car, then move another." {{
  given {{
    spots: [{{id: "S1", level: 0}}, {{id: "S2", level: 0}}, {{id: "S3", level: 1}},
            {{id: "S4", level: 1}}],
    vehicles: [{{plate: "AB123", spot: "S1"}}, {{plate: "CD456", spot: "S2"}},
               {{plate: "EF789"}}],
    open: {"true" if open_garage else "false"},
  }}
  instruction "Park EF789 on S3."
  check parked: vehicles["EF789"].spot == "S3"
  only changes vehicles.spot
  solution {{
    find_free_spots()
    park(vehicle: "EF789", spot: "S3")
  }}
}}
''' if sample else ""
    return f'''world Garage "A parking garage: vehicles park in spots and move between them."

config {{ results: envscaler }}

entity Spot {{ key id: str  level: int(0..5) }}

entity Vehicle {{ key plate: str  spot: Spot? = none }}

state {{
  spots: table Spot
  vehicles: table Vehicle
  open: bool = true
}}

invariant one_vehicle_per_spot "A spot holds at most one vehicle.":
  all s in spots: count([v for v in vehicles if v.spot == s]) <= 1

tool find_free_spots() -> list[str]
  "The ids of the free spots."
{{
  return [s.id for s in spots if not (exists v in vehicles: v.spot == s)]
}}

tool park(vehicle: Vehicle "The plate.", spot: Spot "The spot id.") -> Vehicle
  "Park a vehicle that is not parked in a free spot."
{{
  require vehicle.spot == none else f"{{vehicle.plate}} is already parked."
  require not (exists v in vehicles: v.spot == spot) else f"Spot {{spot.id}} is taken."
  vehicle.spot = spot
  return vehicle
}}

tool move_vehicle(vehicle: Vehicle "The plate.", spot: Spot "The new spot id.") -> Vehicle
  "Move a parked vehicle to another spot."
{{
  require open else "The garage is closed."
  require vehicle.spot != none else f"{{vehicle.plate}} is not parked."
{guard}  vehicle.spot = spot
  return vehicle
}}

tool leave(vehicle: Vehicle "The plate.") -> Vehicle
  "A parked vehicle leaves its spot."
{{
  require open else "The garage is closed."
  require vehicle.spot != none else f"{{vehicle.plate}} is not parked."
  vehicle.spot = none
  return vehicle
}}
{task}'''


def counter_task(world: str, number: int, *, conversational: bool = False) -> str:
    """A task in a :func:`counter_world` named ``world``: four calls from a total of
    ``number + 3``; ``number`` (1 to 9) makes tasks differ."""
    start = number + 3
    talk = ('  persona "A shopkeeper counting crates, brief."\n'
            '  known "How much to add."\n  unknown "The current total."\n'
            if conversational else "")
    return f'''task count_{number} in {world} "Add {number + 1}, then even out." {{
  given {{ total: {start} }}
  instruction "Add {number + 1} to the counter, take one away, add one and take one away."
{talk}  check total_right "The total went up by {number}.": total == {start + number}
  only changes total
  solution {{
    increment(by: {number + 1})
    decrement()
    increment(by: 1)
    decrement()
  }}
}}
'''


def corpus_responder(request: Any) -> str:
    """The model of a ``synth corpus`` run on counter worlds: the answer depends only on the
    request, so a resumed run gets the same answers as an uninterrupted one."""
    if "response_format" in request.body:
        return PLAN_JSON
    if "Rules for the file you write" in request.system:
        return fenced(world_named(request.last_user.split("\n\n")[1]))
    world = re.search(r"Write one new task in (\w+)\.", request.last_user)
    assert world is not None, request.last_user[-300:]
    written = request.last_user.partition("Tasks already written")[2]
    done = len(re.findall(r"^- count_", written, re.MULTILINE))
    return fenced(counter_task(world.group(1), done + 1,
                               conversational="This is a conversational task" in request.system))


VAULT_WORLD = '''world Vault "A safe deposit desk: sign in with a one-time code, take items out."

config { results: envscaler }

entity Holder { key id: str  name: str(1..80)  pin: int(1000..9999) }

entity Item { key id: str  holder: Holder  label: str(1..80)  taken: bool = false }

state {
  holders: table Holder
  items: table Item
  signed_in: Holder? = none
}

tool sign_in(holder: Holder "The holder id.", code: int "The one-time code: 7 x PIN + 3.")
  -> Holder
  "Sign a holder in."
{
  require code == holder.pin * 7 + 3 else "Wrong code."
  signed_in = holder
  return holder
}

tool take_item(item: Item "The item id.") -> Item
  "Take one of the signed-in holder's items out of the vault."
{
  require signed_in != none else "Nobody is signed in."
  require item.holder == signed_in else "That item belongs to someone else."
  require not item.taken else "Already taken."
  item.taken = true
  return item
}

tool list_items() -> list[str]
  "The ids of the items still in the vault."
{
  return [i.id for i in items if not i.taken]
}

task take_the_watch in Vault "Sign in and take the watch out." {
  given {
    holders: [{id: "H1", name: "Ida", pin: 4321}, {id: "H2", name: "Oz", pin: 1234}],
    items: [{id: "I1", holder: "H1", label: "watch"}, {id: "I2", holder: "H1", label: "deed"},
            {id: "I3", holder: "H2", label: "coins"}],
  }
  instruction "I'm Ida, holder H1, and my PIN is 4321: take my watch out."
  check taken: items["I1"].taken
  only changes items.taken, signed_in
  solution {
    sign_in(holder: "H1", code: 30250)
    list_items()
    take_item(item: "I1")
  }
}
'''
