# ruff: noqa  (a specimen of code found in the wild, kept in its own style)
"""An arbitrary-precision calculator built on ``mpmath`` (needs mpmath installed), in the style of
the "scientific calculator" tools agents are handed: it sets the library's global precision
(``mp.dps``) from its own state before each computation and answers digits as text."""

from typing import Any, Dict, List

import mpmath
from mpmath import mp

CONSTANTS = {"pi": mpmath.pi, "e": mpmath.e, "phi": mpmath.phi, "euler": mpmath.euler,
             "catalan": mpmath.catalan}
MAX_DIGITS = 200


class PreciseCalculator:
    """A calculator with a working precision in decimal digits, a last result and a tape."""

    def __init__(self, config: Dict[str, Any]):
        self.digits: int = config.get("digits", 15)
        self.last: str = config.get("last", "0")
        self.tape: List[str] = config.get("tape", [])

    def _start(self) -> None:
        mp.dps = self.digits

    def _answer(self, label: str, value: Any) -> Dict[str, Any]:
        text = mpmath.nstr(value, self.digits)
        self.last = text
        self.tape.append(f"{label} = {text}")
        return {"result": text, "digits": self.digits}

    def set_digits(self, digits: int) -> Dict[str, Any]:
        """Set the working precision.

        Args:
            digits (int): Significant decimal digits, 1 to 200.
        """
        if digits < 1 or digits > MAX_DIGITS:
            return {"error": f"digits must be between 1 and {MAX_DIGITS}"}
        self.digits = digits
        return {"digits": digits}

    def constant(self, name: str) -> Dict[str, Any]:
        """Give a mathematical constant to the working precision.

        Args:
            name (str): "pi", "e", "phi", "euler" or "catalan".
        """
        if name not in CONSTANTS:
            return {"error": f"unknown constant '{name}'"}
        self._start()
        return self._answer(name, +CONSTANTS[name])

    def sqrt(self, x: str) -> Dict[str, Any]:
        """Square root; a negative number gives a complex result.

        Args:
            x (str): The number, as decimal text.
        """
        self._start()
        return self._answer(f"sqrt({x})", mpmath.sqrt(mpmath.mpf(x)))

    def power(self, base: str, exponent: str) -> Dict[str, Any]:
        """Raise a number to a power.

        Args:
            base (str): The base, decimal text.
            exponent (str): The exponent, decimal text.
        """
        self._start()
        return self._answer(f"{base}^{exponent}", mpmath.power(mpmath.mpf(base), mpmath.mpf(exponent)))

    def gamma(self, x: str) -> Dict[str, Any]:
        """The gamma function (factorial of x - 1 for whole x).

        Args:
            x (str): The argument, decimal text; not zero or a negative whole number.
        """
        self._start()
        value = mpmath.mpf(x)
        if value <= 0 and value == mpmath.floor(value):
            return {"error": "gamma has a pole at non-positive integers"}
        return self._answer(f"gamma({x})", mpmath.gamma(value))

    def binomial(self, n: int, k: int) -> Dict[str, Any]:
        """The binomial coefficient n choose k.

        Args:
            n (int): The number of items.
            k (int): How many are chosen.
        """
        self._start()
        return self._answer(f"C({n},{k})", mpmath.binomial(n, k))

    def poly_root(self, coefficients: List[float], guess: float = 1.0) -> Dict[str, Any]:
        """A root of a polynomial near a starting guess (Newton's method).

        Args:
            coefficients (list): Coefficients from the highest power down, e.g. [1, 0, -2].
            guess (float): Where to start looking.
        """
        if len(coefficients) < 2:
            return {"error": "need a polynomial of degree 1 or more"}
        self._start()
        try:
            root = mpmath.findroot(lambda t: mpmath.polyval(coefficients, t), guess)
        except ValueError as exc:
            return {"error": f"no root found: {exc}"}
        return self._answer(f"root{coefficients}", root)

    def integrate_poly(self, coefficients: List[float], a: str, b: str) -> Dict[str, Any]:
        """The definite integral of a polynomial from a to b (numerical quadrature).

        Args:
            coefficients (list): Coefficients from the highest power down.
            a (str): The lower bound, decimal text.
            b (str): The upper bound, decimal text.
        """
        self._start()
        value = mpmath.quad(lambda t: mpmath.polyval(coefficients, t), [mpmath.mpf(a), mpmath.mpf(b)])
        return self._answer(f"int[{a},{b}]", value)

    def recall_last(self) -> Dict[str, Any]:
        """The last result, and how many entries the tape holds."""
        return {"last": self.last, "tape_length": len(self.tape)}

    def clear_tape(self) -> Dict[str, Any]:
        """Empty the tape and reset the last result to 0."""
        cleared = len(self.tape)
        self.tape = []
        self.last = "0"
        return {"cleared": cleared}
