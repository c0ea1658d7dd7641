"""The exception types the package raises for bad input and for a broken run.

Every check that rejects something names the offending field and the spec rule it
breaks, so a caller (or a conformance vector) can tell *why* without reading a traceback.
Raising happens before any state is built, so the state given to ``step`` stays usable.
The exit code of each kind of failure lives here too (docs/commands.md, "Exit codes"), so that every
command, whichever layer it sits in, maps errors alike without importing the CLI.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

# Exit codes (docs/commands.md, "Exit codes"); 1 is `check`'s "some vector differs" (VEC-R6).
EXIT_OK = 0
EXIT_DIFFERENT = 1
EXIT_BAD_INPUT = 2
EXIT_INCONSISTENT = 3
EXIT_FAILURE = 4
EXIT_REFUSED = 5  # `conform`: no trace differed or failed, some were refused (CF-R39)
EXIT_UNANSWERED = 6  # `conform`: no trace differed, the command failed some (CF-R39)
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143  # a stream stopped by SIGTERM, as a shell reports it (MQ-R14)

SHOWN = 200  # characters of a rejected value an error message shows at most


def shown(value: object) -> str:
    """``repr(value)``, cut to :data:`SHOWN` characters: a message never echoes megabytes."""
    if isinstance(value, int) and value.bit_length() > 4 * SHOWN:  # repr may refuse it
        return f"<an integer of {value.bit_length()} bits>"
    try:
        text = repr(value)
    except (RecursionError, ValueError):
        return f"<a {type(value).__name__} too deep to show>"
    return text if len(text) <= SHOWN else f"{text[:SHOWN]}... ({len(text)} characters)"


class InvalidInput(ValueError):
    """A configuration value or an input violates a rule of the spec.

    ``field`` names the offending field (``"queue_size"``, ``"inputs[3].stamp"``, ...),
    ``rule`` the spec id it breaks (``"AT-R1"``), ``value`` the rejected value (``None``:
    nothing to show, and the message says nothing of it).
    """

    def __init__(self, field: str, rule: str, message: str, value: object = None) -> None:
        self.field = field
        self.rule = rule
        self.value = value
        self.message = message
        # No "got None" when there is no value to show (an option left out, a whole run).
        got = "" if value is None else f"; got {shown(value)}"
        super().__init__(f"{field}: {message} (rule {rule}{got})")


def require(condition: bool, field: str, rule: str, message: str, value: object = None) -> None:
    """Raise :class:`InvalidInput` unless ``condition`` holds."""
    if not condition:
        raise InvalidInput(field, rule, message, value)


INT64_MAX = 2**63 - 1


def require_count(value: object, field: str, rule: str, *, minimum: int = 0) -> int:
    """Check that ``value`` is an integer count (a size, not a time) in [``minimum``,
    2**63 - 1]; ``bool`` is refused, as in :func:`require_ns`, whose wording ("number of
    nanoseconds") would be wrong for a count."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidInput(field, rule, "must be an integer", value)
    if value < minimum:
        raise InvalidInput(field, rule, f"must be >= {minimum}", value)
    if value > INT64_MAX:
        raise InvalidInput(field, rule, "must be at most 2**63 - 1", value)
    return value


def require_ns(value: object, field: str, rule: str, *, minimum: int = 0) -> int:
    """Check that ``value`` is an integer number of nanoseconds in [``minimum``, 2**63 - 1].

    ``bool`` is rejected although it is an ``int`` subclass: ``True`` as a stamp is a bug.
    Every machine and adapter keeps times within int64 (DRV-D9): what Parquet, Spark and
    the upstream implementations can hold.
    """
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidInput(field, rule, "must be an integer number of nanoseconds", value)
    if value < minimum:
        raise InvalidInput(field, rule, f"must be >= {minimum}", value)
    if value > INT64_MAX:
        raise InvalidInput(field, rule, "must fit in int64 ns (at most 2**63 - 1)", value)
    return value


@contextmanager
def output_fields(raw: object) -> Iterator[Mapping[str, Any]]:
    """Decode one JSON output inside the block (``output_from_json``): a non-object, or a
    field missing or of the wrong shape, becomes :class:`InvalidInput` (VEC-R4)."""
    if not isinstance(raw, Mapping):
        raise InvalidInput("output", "VEC-R4", "must be an object", raw)
    try:
        yield raw
    except (KeyError, TypeError) as error:
        raise InvalidInput("output", "VEC-R4", f"{raw.get('kind')} output lacks a field "
                           f"({error})", raw) from None


class ConsistencyError(RuntimeError):
    """A run broke a promise about its rows (exit 3): a row lost or accounted twice
    (SP-R6), rows out of order (SP-R10), an id used twice in a source (SP-R1)."""


def wrong_object(function: str, config: object, state: object, config_type: type,
                 state_type: type) -> TypeError:
    """The error of a ``step`` handed another config or state than its own (a caller's
    bug, not bad data: hence ``TypeError``, named clearly rather than an AttributeError
    from deep inside)."""
    wrong = [f"{what} must be a {kind.__module__}.{kind.__qualname__}, "
             f"got {type(value).__module__}.{type(value).__qualname__}"
             for what, value, kind in (("config", config, config_type),
                                       ("state", state, state_type))
             if type(value) is not kind]
    return TypeError(f"{function}: {'; '.join(wrong)}")


def foreign_state(built_under: object) -> InvalidInput:
    """DRV-R10: the refusal of a state stepped under a config other than the one it was
    built under (its ``config``). What a state holds means something only under its own
    config (topic indexes, windows, batch lengths): stepped under another, a held message
    could be lost without an outcome. The state is left as it was."""
    return InvalidInput("state", "DRV-R10", "was built under another config: a state "
                        "belongs to the config it was built under (step it with that "
                        "config, or start from initial(config)); it was built under",
                        built_under)


def failure_code(error: BaseException) -> int:
    """The exit code of an exception that ended a command (docs/commands.md, "Exit codes")."""
    if isinstance(error, InvalidInput | OSError | UnicodeError):
        return EXIT_BAD_INPUT
    if isinstance(error, ConsistencyError):
        return EXIT_INCONSISTENT
    if isinstance(error, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    return EXIT_FAILURE
