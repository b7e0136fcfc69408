# ruff: noqa  (a specimen of code found in the wild, kept in its own style)
"""A bookkeeping calculator of the kind finance agents get: money as ``decimal.Decimal``
quantized to cents with a configurable rounding mode, shares as ``fractions.Fraction``, and a
few ``math`` helpers. Results are dicts holding decimal text (as accountants want it) or
floats (where the author reached for ``math``)."""

import math
from decimal import ROUND_DOWN, ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal, InvalidOperation
from fractions import Fraction
from typing import Any, Dict, List

ROUNDING_MODES = {"half_up": ROUND_HALF_UP, "half_even": ROUND_HALF_EVEN, "down": ROUND_DOWN}
CENT = Decimal("0.01")


def _money(text: str) -> Decimal:
    try:
        value = Decimal(str(text))
    except InvalidOperation:
        raise ValueError(f"not an amount: {text!r}") from None
    if not value.is_finite():
        raise ValueError(f"not an amount: {text!r}")
    return value


class LedgerMath:
    """Money arithmetic with a rounding policy, named memory cells and an audit trail."""

    def __init__(self) -> None:
        self.rounding: str = "half_even"
        self.currency: str = "EUR"
        self.memory: Dict[str, str] = {}
        self.audit: List[str] = []

    def load_state(self, data: Dict[str, Any]) -> None:
        """Restore a saved session: rounding mode, currency, memory cells and audit trail.

        Args:
            data (dict): The saved session, as written by the host application.
        """
        self.rounding = data.get("rounding", "half_even")
        self.currency = data.get("currency", "EUR")
        self.memory = dict(data.get("memory", {}))
        self.audit = list(data.get("audit", []))

    def _cents(self, value: Decimal) -> Decimal:
        return value.quantize(CENT, rounding=ROUNDING_MODES[self.rounding])

    def set_rounding(self, mode: str) -> Dict[str, str]:
        """Choose how amounts are rounded to cents.

        Args:
            mode (str): "half_up", "half_even" (banker's rounding) or "down".
        """
        if mode not in ROUNDING_MODES:
            return {"error": f"Unknown rounding mode '{mode}'. Use one of: {', '.join(ROUNDING_MODES)}"}
        self.rounding = mode
        return {"rounding": mode}

    def total(self, amounts: List[str]) -> Dict[str, str]:
        """Add amounts and round the sum to cents.

        Args:
            amounts (list): Amounts as decimal text, e.g. ["19.99", "0.015"].
        """
        if not amounts:
            return {"error": "Nothing to add"}
        result = self._cents(sum((_money(a) for a in amounts), Decimal(0)))
        self.audit.append(f"total {len(amounts)} -> {result}")
        return {"total": str(result), "currency": self.currency}

    def apply_tax(self, amount: str, rate_percent: str) -> Dict[str, str]:
        """Add tax to a net amount: the tax and the gross, each rounded to cents.

        Args:
            amount (str): The net amount, decimal text.
            rate_percent (str): The tax rate in percent, decimal text (e.g. "7.7").
        """
        net = _money(amount)
        rate = _money(rate_percent)
        if rate < 0:
            return {"error": "Tax rate cannot be negative"}
        tax = self._cents(net * rate / 100)
        gross = self._cents(net) + tax
        self.audit.append(f"tax {rate}% on {net}")
        return {"net": str(self._cents(net)), "tax": str(tax), "gross": str(gross)}

    def split(self, amount: str, weights: List[int]) -> Dict[str, Any]:
        """Split an amount by integer weights; the rounding remainder goes to the first share.

        Args:
            amount (str): The amount to split, decimal text.
            weights (list): Positive integer weights, one per party.
        """
        if not weights or any(w <= 0 for w in weights):
            return {"error": "Weights must be positive"}
        whole = self._cents(_money(amount))
        total_weight = sum(weights)
        fractions = [Fraction(w, total_weight) for w in weights]
        shares = [self._cents(whole * f.numerator / f.denominator) for f in fractions]
        shares[0] += whole - sum(shares)
        self.audit.append(f"split {whole} in {len(weights)}")
        return {"shares": [str(s) for s in shares],
                "fractions": [f"{f.numerator}/{f.denominator}" for f in fractions]}

    def simplify_ratio(self, a: int, b: int) -> Dict[str, Any]:
        """Reduce a ratio a:b to lowest terms.

        Args:
            a (int): The first part.
            b (int): The second part; not zero.
        """
        ratio = Fraction(a, b)  # ZeroDivisionError for b == 0, as written
        divisor = math.gcd(a, b)
        return {"ratio": f"{ratio.numerator}:{ratio.denominator}", "gcd": divisor,
                "as_float": float(ratio)}

    def compound(self, principal: str, annual_rate_percent: str, years: int) -> Dict[str, Any]:
        """Grow a principal at a yearly compound rate, rounding to cents once at the end.

        Args:
            principal (str): The starting amount, decimal text.
            annual_rate_percent (str): The yearly rate in percent, decimal text.
            years (int): Whole years, 0 to 100.
        """
        if years < 0 or years > 100:
            return {"error": "Years must be between 0 and 100"}
        factor = (1 + _money(annual_rate_percent) / 100) ** years
        value = self._cents(_money(principal) * factor)
        doubling = None
        rate = float(annual_rate_percent)
        if rate > 0:
            doubling = round(math.log(2) / math.log1p(rate / 100), 2)
        return {"value": str(value), "doubling_years": doubling}

    def store(self, name: str, amount: str) -> Dict[str, str]:
        """Keep an amount in a named memory cell, rounded to cents.

        Args:
            name (str): The cell's name.
            amount (str): The amount, decimal text.
        """
        value = self._cents(_money(amount))
        self.memory[name] = str(value)
        return {name: str(value)}

    def recall(self, name: str, add: str = "0") -> Dict[str, str]:
        """Read a memory cell, optionally adding an amount to what is returned (not stored).

        Args:
            name (str): The cell's name.
            add (str): An amount to add to the cell's value, decimal text.
        """
        if name not in self.memory:
            return {"error": f"No memory cell '{name}'"}
        return {name: str(self._cents(Decimal(self.memory[name]) + _money(add)))}

    def convert(self, amount: str, rate: str, to_currency: str) -> Dict[str, str]:
        """Convert an amount to another currency at a rate, rounding to cents.

        Args:
            amount (str): The amount in the current currency, decimal text.
            rate (str): Units of the target currency per unit of the current one.
            to_currency (str): The target currency's code, three capital letters.
        """
        if len(to_currency) != 3 or not to_currency.isupper():
            return {"error": f"Bad currency code '{to_currency}'"}
        converted = self._cents(_money(amount) * _money(rate))
        self.audit.append(f"convert {self.currency}->{to_currency}")
        return {"amount": str(converted), "currency": to_currency}
