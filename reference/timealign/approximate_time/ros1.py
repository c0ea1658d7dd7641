"""The ROS 1 profile's 32-bit time (AT-R19): what ``arithmetic = "ros1"`` refuses.

ROS 1 keeps a time as unsigned 32-bit seconds and a duration as signed 32-bit seconds,
each with nanoseconds (``ros::TimeBase``, ``ros::DurationBase`` in ``roscpp_core``
``rostime``). Arithmetic that leaves that range throws ``std::runtime_error`` from inside
the policy's ``add()``, halfway through its bookkeeping, and the synchronizer is left in a
state no rule describes (it may never publish again). The reference refuses, before
anything changes, every config and message with which some comparison of the ROS 1 policy
could leave the range, so the ros1 profile only ever claims what ROS 1 computes.
"""

from __future__ import annotations

from collections.abc import Iterable

from timealign.approximate_time.arithmetic import scale_ros1
from timealign.errors import InvalidInput
from timealign.rulebook import quiet, rule

NS_PER_S = 1_000_000_000
#: The largest ``ros::Time``: (2^32 - 1) s + 999 999 999 ns.
TIME_MAX = 2**32 * NS_PER_S - 1
#: The largest ``ros::Duration``: (2^31 - 1) s + 999 999 999 ns (``ros::DURATION_MAX``).
DURATION_MAX = 2**31 * NS_PER_S - 1


@rule("AT-R19")
def refuse_config(topics: int, max_interval: int, bounds: tuple[int, ...]) -> None:
    """AT-R19, config: refuse a config ROS 1's policy cannot run. The ROS 1 policy takes 2
    to 9 message types; a maximum interval or a lower bound is a ``ros::Duration``.
    ros1's replacement of ``model._durations_fit``."""
    if topics < 2:
        raise InvalidInput("topics", "AT-R19",
                           "the ros1 profile needs at least two topics (ROS 1's policy "
                           "takes two message types or more)", topics)
    if max_interval > DURATION_MAX:
        raise InvalidInput("max_interval_duration", "AT-R19",
                           f"must fit a ROS 1 Duration (<= {DURATION_MAX} ns)", max_interval)
    for bound in bounds:
        if bound > DURATION_MAX:
            raise InvalidInput("inter_message_lower_bounds", "AT-R19",
                               f"each must fit a ROS 1 Duration (<= {DURATION_MAX} ns)",
                               bound)


@quiet
def in_range(stamp: int, bound: int, low: int, high: int, reach: int, factor: float) -> bool:
    """Whether a message at ``stamp`` (its topic's lower bound ``bound``) keeps every ROS 1
    time computation in range, with ``low``/``high`` the extreme stamps in play after it
    and ``reach`` the largest lower bound (AT-R19).

    Every difference the policy takes is between stamps in play or virtual times at most
    ``reach`` past one (``past.back() + bound``, floored at the pivot time), so its size
    is at most ``high - low + reach``; scaled by the age penalty it must stay a
    ``ros::Duration``, and a virtual time must stay a ``ros::Time``.
    """
    if stamp + bound > TIME_MAX:
        return False
    return scale_ros1(high - low + reach, factor) <= DURATION_MAX


def check_message(stamp: int, bound: int, reach: int, factor: float,
                  in_play: Iterable[int]) -> None:
    """AT-R19, message: raise ``InvalidInput("stamp", "AT-R19")`` unless :func:`in_range`.

    ``in_play`` are the stamps the state holds (every held message, the pivot time).
    """
    low = high = stamp
    for held in in_play:
        if held < low:
            low = held
        elif held > high:
            high = held
    if not in_range(stamp, bound, low, high, reach, factor):
        refuse_message(low, high, stamp)


@rule("AT-R19", profiles=("ros1",))
def refuse_message(low: int, high: int, stamp: int) -> None:
    """A message whose stamp, with the stamps held, leaves ROS 1's 32-bit time."""
    raise InvalidInput(
            "stamp", "AT-R19",
            f"ROS 1 time is 32-bit: with the stamps held ({low} to {high} ns) and the age "
            f"penalty, a time or duration of the ROS 1 policy would leave its range", stamp)
