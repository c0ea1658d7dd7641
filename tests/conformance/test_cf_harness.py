"""The harness in process: sources, projections, rules, report, saved vectors (CF-R6 to
CF-R16), and the reference's fast path checked through it (CF-I2)."""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, Phase, find, settings

from timealign import Algorithm, InvalidInput, registry, vectors
from timealign.approximate_time.traces import INSTANCES as AT_INSTANCES
from timealign.cli import main
from timealign.conformance import Refusal, check, implementation, run_reference, shipped
from timealign.conformance.observe import profile, project
from timealign.conformance.strategies import traces

ROOT = Path(__file__).resolve().parents[2]
JSON = dict[str, Any]
AT = registry.get("approximate_time")


def reference(name: str) -> Any:
    return implementation(registry.get(name))


def forgetting(name: str, kind: str, reason: str | None = None) -> Any:
    """The reference, but never reporting outputs of ``kind`` (with ``reason``)."""
    def run(config: JSON, inputs: list[JSON]) -> list[JSON]:
        return [o for o in run_reference(registry.get(name), config, inputs)
                if not (o["kind"] == kind and (reason is None or o.get("reason") == reason))]
    return run


# --- fast path (CF-I2) -------------------------------------------------------------------

Descriptor = Algorithm[Any, Any, Any, Any]


def fast_paths() -> Iterator[tuple[str, Descriptor, Descriptor]]:
    """(name, rule text, fast path) of every algorithm with a separate fast step."""
    for name in registry.names():
        registered = registry.get(name)
        if registered.machine.fast is not None:  # registered beside the rule text
            yield name, registered, registered.fast_path()
            continue
        rule_text = importlib.import_module(f"timealign.{name}.machine").step
        if registered.machine.step is not rule_text:  # the registry runs the fast step itself
            yield name, attrs.evolve(registered, machine=attrs.evolve(registered.machine,
                                                                      step=rule_text)), registered


def test_there_is_a_fast_path_to_check() -> None:
    assert any(name == "approximate_time" for name, _, _ in fast_paths())


@pytest.mark.parametrize(("name", "rule_text", "fast"), list(fast_paths()),
                         ids=lambda x: x if isinstance(x, str) else "")
def test_fast_path_conforms_to_the_rule_text_cf_i2(
        name: str, rule_text: Descriptor, fast: Descriptor) -> None:
    """CF-I2: shipped vectors, 300 fuzz traces and explore depth 3, in process."""
    report = check(rule_text, implementation(fast), fuzz=300, seed=10, explore=3)
    assert report.ok, report.text()
    assert [s.source for s in report.sources] == ["vectors", "fuzz", "explore"]
    assert all(s.run > 0 for s in report.sources)


# --- sources -----------------------------------------------------------------------------

def test_shipped_suites_are_installed_cf_r6() -> None:
    """CF-R6: the package holds every shipped vector, and the reference agrees with it."""
    for name in registry.names():
        installed = {v.name: v for v in shipped(name)}
        files = {v.name: v for p in vectors.files([ROOT / "vectors" / name])
                 for v in vectors.load(p)}
        assert installed.keys() == files.keys() and len(installed) > 0
        assert all(installed[k].to_json() == files[k].to_json() for k in files)
        assert check(name, reference(name)).ok


def test_vectors_differences_are_shrunk_cf_r6_cf_r14_cf_d4() -> None:
    """CF-R6, CF-R14, CF-D4: a vector differing on a pivot refusal is cut down by input
    deletion and named by rule."""
    report = check("approximate_time", forgetting("approximate_time", "dropped",
                                                  "pivot_refused"))
    source = report.sources[0]
    assert source.differ > 0 and not report.ok
    for difference in source.differences:
        assert len(difference.vector.inputs) <= difference.original_size
        assert {"AT-R9", "AT-D3"} <= set(difference.rules)
        assert any(o.get("reason") == "pivot_refused" for o in difference.expected)
        assert not any(o.get("reason") == "pivot_refused" for o in difference.observed)
    assert "DIFFERS on" in report.text() and "AT-R9" in report.text()


def test_fuzz_is_repeatable_and_shrinks_cf_r7() -> None:
    """CF-R7: one seed, one minimal trace; a dropped superseded message needs few inputs."""
    faulty = forgetting("approximate_time", "dropped", "superseded")
    first, second = (check("approximate_time", faulty, vectors=[], fuzz=300, seed=3, size=40)
                     for _ in range(2))
    [a], [b] = first.sources[0].differences, second.sources[0].differences
    assert a.vector == b.vector and a.rules == b.rules
    assert len(a.vector.inputs) <= 6 < a.original_size or a.original_size <= 6
    assert "AT-R11" in a.rules
    for k in range(len(a.vector.inputs)):  # CF-D4: no single input can be removed
        smaller = attrs.evolve(a.vector, inputs=a.vector.inputs[:k] + a.vector.inputs[k + 1:])
        assert check("approximate_time", faulty, vectors=[smaller]).ok


def test_output_at_the_wrong_input_differs_cf_d2() -> None:
    """CF-D2: the same outputs reported one input late differ, pinned to the first input
    whose outputs moved."""
    def late(config: JSON, inputs: list[JSON]) -> list[JSON]:
        produced = run_reference(AT, config, inputs)
        return [{**o, "input": o["input"] + 1} if o["kind"] == "published" else o
                for o in produced]

    report = check("approximate_time", late, vectors=[v for v in shipped("approximate_time")
                                                     if v.name == "exact_match_publishes_at_once"])
    [difference] = report.sources[0].differences
    assert difference.expected[0]["kind"] == "published"
    assert difference.at == difference.expected[0]["input"] and not difference.observed


def test_explore_walks_every_trace_shortest_first_cf_r8_cf_d4() -> None:
    """CF-R8: depth 2 sends every 1- and 2-move sequence of every instance, closed by the
    end input; the first divergence of an instance is one of its shortest."""
    expected = sum(len(moves(())) + sum(len(moves((m,))) for m in moves(()))
                   for moves in (i.moves for i in AT_INSTANCES))
    report = check("approximate_time", forgetting("approximate_time", "pending"),
                   vectors=[], explore=2)
    source = report.sources[0]
    assert source.run == expected
    assert source.differences and all(len(d.vector.inputs) == 2 for d in source.differences)
    assert all(d.vector.inputs[-1] == {"op": "end"} for d in source.differences)


@pytest.mark.parametrize(("name", "corner"), [
    ("approximate_time", lambda v: v.inputs and v.inputs[0].get("stamp", 0) > 2**53),
    ("approximate_time", lambda v: any(i["op"] == "end" for i in v.inputs[:-1])),
    ("approximate_time", lambda v: any(a.get("topic") == b.get("topic") and
                                       a.get("stamp", 0) > b.get("stamp", 0)
                                       for a, b in zip(v.inputs, v.inputs[1:], strict=False))),
    ("event_time_batcher", lambda v: any(a["op"] == "tick" and b["op"] == "message" and
                                         a["at"] == b["at"]
                                         for a, b in zip(v.inputs, v.inputs[1:], strict=False))),
    ("event_time_batcher", lambda v: len({i.get("id") for i in v.inputs if "id" in i}) <
     sum(1 for i in v.inputs if "id" in i)),
    ("rate_aware_batcher", lambda v: any(i["op"] == "set_batch_length" for i in v.inputs)),
    ("rate_aware_batcher", lambda v: v.config["batch_length_s"] == 1.0 and len(v.inputs) > 8),
])
def test_strategies_reach_the_corners_cf_r9(name: str, corner: Any) -> None:
    """CF-R9: epoch stamps, ends mid-run, out-of-order stamps, tick/message collisions,
    re-used ids, batch length changes, the real-scale rate-aware config."""
    found = find(traces(registry.get(name)), corner, settings=settings(
        max_examples=500, database=None, phases=[Phase.generate],
        suppress_health_check=list(HealthCheck)))
    assert corner(found)


# --- observability profiles --------------------------------------------------------------

def test_at_upstream_keeps_published_sets_only_cf_r11() -> None:
    """CF-R10, CF-R11: drops, warnings, pending and errors are not observed upstream."""
    outputs = [{"input": 0, "kind": "warning", "topic": 0, "reason": "out_of_order"},
               {"input": 1, "kind": "dropped", "id": "a", "reason": "pivot_refused"},
               {"input": 2, "kind": "published", "ids": ["b", "c"]},
               {"input": 3, "kind": "error", "field": "stamp", "rule": "AT-R2"},
               {"input": 4, "kind": "pending", "id": "d"}]
    assert project(profile("approximate_time", "upstream"), outputs) == [
        {"input": 2, "kind": "published", "ids": ["b", "c"]}]
    assert project(profile("approximate_time", "full"), outputs) == outputs


def test_eb_upstream_sees_id_sets_and_timers_cf_r12() -> None:
    """CF-R12: batch ids as a set without bounds, timers kept, rejections forgotten."""
    chosen = profile("event_time_batcher", "upstream")
    mine = [{"input": 0, "kind": "timer", "at": 9},
            {"input": 1, "kind": "batch", "start": 1, "end": 4, "ids": ["b", "a"]},
            {"input": 1, "kind": "rejected", "id": "c", "reason": "too_old"}]
    assert project(chosen, mine) == [{"input": 0, "kind": "timer", "at": 9},
                                     {"input": 1, "kind": "batch", "ids": ["a", "b"]}]


def test_rb_upstream_drops_pending_cf_r13() -> None:
    """CF-R13: batches keep start, end and ids in order; pending outputs are not seen."""
    outputs = [{"input": 3, "kind": "batch", "start": 1, "end": 2, "ids": ["y", "x"]},
               {"input": 4, "kind": "pending", "id": "z"}]
    assert project(profile("rate_aware_batcher", "upstream"), outputs) == outputs[:1]


@pytest.mark.parametrize("name", registry.names())
def test_upstream_implementation_agrees_only_under_its_profile_cf_r10(name: str) -> None:
    """CF-R10: an implementation reporting the upstream subset agrees under ``upstream``
    and differs under ``full`` on the shipped vectors (it refuses the configs the reference
    refuses, CF-R3: accepting one is a difference whatever the profile, CF-R19)."""
    chosen = profile(name, "upstream")

    def upstream(config: JSON, inputs: list[JSON]) -> list[JSON]:
        produced = run_reference(registry.get(name), config, inputs)
        if produced and produced[0]["input"] is None:
            raise Refusal("unsupported config")
        return project(chosen, produced)

    assert check(name, upstream, observe="upstream").ok
    assert not check(name, upstream, observe="full").ok


def test_eb_ids_in_another_order_agree_upstream_cf_r12() -> None:
    """CF-R12: the order of a batch's ids does not matter upstream, but does in full."""
    def reordered(config: JSON, inputs: list[JSON]) -> list[JSON]:
        produced = run_reference(registry.get("event_time_batcher"), config, inputs)
        return [{**o, "ids": o["ids"][::-1]} if o["kind"] == "batch" else o for o in produced]

    assert check("event_time_batcher", reordered, observe="upstream").ok
    assert not check("event_time_batcher", reordered).ok


def test_unknown_profile_is_refused_cf_r10() -> None:
    with pytest.raises(InvalidInput) as caught:
        check("approximate_time", reference("approximate_time"), observe="ros3")
    assert caught.value.rule == "CF-R10"


# --- report and saved vectors ------------------------------------------------------------

def test_report_json_and_saved_vectors_cf_r15_cf_r16(tmp_path: Path) -> None:
    """CF-R15, CF-R16: the JSON report's counts; every saved vector passes `timealign
    check` with the reference's full outputs and still makes the implementation differ."""
    faulty = forgetting("approximate_time", "dropped", "queue_overflow")
    report = check("approximate_time", faulty, fuzz=200, seed=2, explore=2,
                   observe="full", save_to=tmp_path)
    body = json.loads(json.dumps(report.to_json()))
    assert body["format"] == "timealign.conformance/1" and body["ok"] is False
    assert set(body["sources"]) == {"vectors", "fuzz", "explore"}
    for counts in body["sources"].values():
        assert counts["run"] == counts["agree"] + counts["differ"] + counts["failed"]
    assert "AT-R5" in body["differs_on"]
    saved = sorted(p for p in tmp_path.glob("*.json") if p.name != "_timealign.json")
    assert len(saved) == sum(len(s["differences"]) for s in body["sources"].values()) > 0
    manifest = json.loads((tmp_path / "_timealign.json").read_text(encoding="utf-8"))
    assert manifest["files"] == [p.name for p in saved]  # CLI-R5: the folder is conform's
    assert main(["check", str(tmp_path)]) == 0
    for path in saved:
        [vector] = vectors.load(path)
        assert vector.rules and vector.outputs is not None
        assert check("approximate_time", faulty, vectors=[vector]).sources[0].differ == 1


def test_extra_output_is_pinned_to_its_own_input_cf_r14() -> None:
    """CF-R14: an extra output at an earlier input than the next expected one names that
    earlier input as the first diverging one."""
    def chatty(config: JSON, inputs: list[JSON]) -> list[JSON]:
        produced = run_reference(AT, config, inputs)
        later = [o for o in produced if o["input"] is not None and o["input"] > 0]
        extra = {"input": 0, "kind": "warning", "topic": 0, "reason": "out_of_order"}
        return [o for o in produced if o not in later] + [extra] + later

    [vector] = [v for v in shipped("approximate_time") if v.name == "several_sets_in_one_input"]
    report = check("approximate_time", chatty, vectors=[vector])
    [difference] = report.sources[0].differences
    assert difference.at == 0 and difference.observed[-1]["kind"] == "warning"
    assert "AT-R4" in difference.rules
