"""Generate a realistic WorldSpec file of about N lines that checks clean.

The spec is one world made of *groups*: each group is the same template
(enums, a record, two entities, helper ``fn``s, invariants, four tools with
several statements each, and a task with inline data) with every name
suffixed by the group number, so the groups never clash and the whole file
type-checks without a diagnostic. The state block lists every group's tables.
Comment lines pad the file to exactly the number of lines asked for.

Usage::

    python benchmarks/gen_spec.py --lines 1000 -o /tmp/bench.world
    python benchmarks/gen_spec.py --check        # generate, check, report problems

As a module: ``generate(lines) -> str``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from string import Template

__all__ = ["DEFAULT_LINES", "HEADER", "GROUP", "STATE_ITEMS", "generate", "main"]

DEFAULT_LINES = 1000

HEADER = '''\
# A generated benchmark world: $groups groups of support desks, each with
# accounts and tickets. Names carry the group number so nothing clashes.

world Bench "A generated world of support desks, for benchmarking the checker."

config {
  results: envscaler
  clock: "2024-03-01T09:00:00"
  tick: 60
  seed: 7
}
'''

#: One state block for the whole world; ``$items`` is every group's state items.
STATE = '''
state {
$items}
'''

STATE_ITEMS = '''\
  accounts_$i: table Account$i
  tickets_$i: table Ticket$i
  ticket_ids_$i: sequence "T$i-{:04d}"
'''

GROUP = '''
# ------------------------------------------------------------------ group $i

enum Tier$i "The service tier of an account." {
  basic "The free tier.",
  plus "Paid monthly.",
  premium = "premium plus" "Paid yearly, with priority support.",
}

enum TicketState$i { open, waiting, resolved, closed }

record Contact$i "How to reach an account holder." {
  email: str matching /^[^@\\s]+@[^@\\s]+$$/
  phone: str matching /^\\+?[0-9]{7,15}$$/ = "+15550000"
  city: str(1..60)
}

entity Account$i "A customer account." {
  key id: str
  name: str(1..80)
  contact: Contact$i
  tier: Tier$i = basic
  credit: float(0.0..) = 0.0
  tags: list[str](..10)
  opened_at: datetime = now
}

entity Ticket$i "A support ticket." {
  key id: str = next(ticket_ids_$i)
  account: Account$i
  subject: str(1..200)
  state: TicketState$i = open
  priority: int(1..5) = 3
  notes: list[str]
  created_at: datetime = now
}

fn open_tickets_$i(account: Account$i) -> list[Ticket$i]
  "The account's tickets that are not closed."
{
  return [t for t in tickets_$i if t.account == account and t.state != closed]
}

fn credit_after_$i(account: Account$i, amount: float) -> float
  "The account's credit after adding ``amount`` and the tier's bonus."
{
  let bonus = 0.0
  if account.tier == premium {
    bonus = round(amount * 0.1, 2)
  } else if account.tier == plus {
    bonus = round(amount * 0.05, 2)
  }
  return round(account.credit + amount + bonus, 2)
}

invariant resolved_have_notes_$i "A resolved ticket says what was done.":
  all t in tickets_$i: t.state != resolved or len(t.notes) > 0

invariant credit_cap_$i "No account holds more than 10,000 in credit.":
  all a in accounts_$i: a.credit <= 10000.0

tool open_ticket_$i(
  account: Account$i "The account id, e.g. A$i-001." else f"Account {account} not found.",
  subject: str(1..200) "What the problem is.",
  priority: int(1..5) = 3 "1 (low) to 5 (urgent).",
) -> Ticket$i
  "Open a support ticket. Premium accounts get at least priority 3."
{
  require len(open_tickets_$i(account)) < 5 else f"Account {account.id} already has 5 open tickets."
  let level = priority
  if account.tier == premium and level < 3 {
    level = 3
  }
  let ticket = Ticket$i(account: account, subject: subject.strip(), priority: level, notes: [])
  insert ticket into tickets_$i
  return ticket
}

tool resolve_ticket_$i(
  ticket: Ticket$i "The ticket id, e.g. T$i-0001." else f"Ticket {ticket} not found.",
  note: str(1..500) freeform "What was done.",
) -> Ticket$i
  "Resolve an open or waiting ticket, with a note saying what was done."
{
  require ticket.state == open or ticket.state == waiting
    else f"Ticket {ticket.id} is already {ticket.state}."
  append note to ticket.notes
  ticket.state = resolved
  return ticket
}

tool add_credit_$i(
  account: Account$i "The account id." else f"Account {account} not found.",
  amount: float(0.01..500.0) "How much credit to add.",
) -> Account$i
  "Add credit to an account; plus and premium accounts get a bonus on top."
{
  let updated = credit_after_$i(account, amount)
  require updated <= 10000.0
    else f"Account {account.id} would hold {updated:.2f}; the cap is 10000.00."
  account.credit = updated
  return account
}

tool list_tickets_$i(
  state: TicketState$i? = none "Only list tickets in this state.",
) -> list[str]
  "List ticket ids, newest first."
{
  let found = [t for t in tickets_$i if state == none or t.state == state]
  return [t.id for t in sorted(found, key: t => t.created_at, reverse: true)]
}

task resolve_login_$i in Bench "Resolve a login ticket with a note." {
  given {
    accounts_$i: [{id: "A$i-001", name: "Ann", tags: [],
                   contact: {email: "ann@example.com", city: "Austin"}}],
    tickets_$i: [{id: "T$i-0001", account: "A$i-001", subject: "Login fails", notes: [],
                  created_at: "2024-03-01T08:00:00"}],
  }
  instruction "My login ticket T$i-0001 is fixed: the password was reset. Please close it out."
  check resolved: tickets_$i["T$i-0001"].state == resolved
  check noted "The note is kept.": len(tickets_$i["T$i-0001"].notes) == 1
  only changes tickets_$i.state, tickets_$i.notes
  solution { resolve_ticket_$i(ticket: "T$i-0001", note: "Password reset.") }
  tags support
  split train
}
'''


def _lines(text: str) -> int:
    return text.count("\n")


def generate(lines: int = DEFAULT_LINES) -> str:
    """A clean spec of exactly ``lines`` lines (at least one group, so maybe more).

    As many whole groups as fit are emitted; the rest is padded with comment
    lines, so the file has exactly ``lines`` lines when ``lines`` is at least
    the size of one group.
    """
    group = Template(GROUP)
    items = Template(STATE_ITEMS)
    per_group = _lines(group.substitute(i=1)) + _lines(items.substitute(i=1))
    fixed = _lines(Template(HEADER).substitute(groups=1)) + _lines(STATE.replace("$items", ""))
    count = max(1, (lines - fixed) // per_group)
    header = Template(HEADER).substitute(groups=count)
    state = Template(STATE).substitute(items="".join(items.substitute(i=i)
                                                     for i in range(1, count + 1)))
    body = "".join(group.substitute(i=i) for i in range(1, count + 1))
    text = header + state + body
    padding = lines - _lines(text)
    if padding > 0:
        text += "".join(f"# padding {k}\n" for k in range(1, padding + 1))
    return text


def main(argv: list[str] | None = None) -> int:
    """Command line: write the spec to stdout or ``-o``; ``--check`` checks it too."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=DEFAULT_LINES,
                        help=f"how many lines (default {DEFAULT_LINES})")
    parser.add_argument("-o", "--output", type=Path, help="write here instead of stdout")
    parser.add_argument("--check", action="store_true",
                        help="check the generated spec and print its diagnostics")
    args = parser.parse_args(argv)
    text = generate(args.lines)
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    elif not args.check:
        sys.stdout.write(text)
    if args.check:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
        from worldspec.compiler.api import check_source

        result = check_source(text, str(args.output or "bench.world"))
        for d in result.diagnostics:
            print(f"{d.span}: {d.severity.value}[{d.code}] {d.message}")
        print(f"{_lines(text)} lines, {len(result.diagnostics)} diagnostics")
        return 0 if not result.diagnostics else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
