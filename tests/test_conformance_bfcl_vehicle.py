"""Conformance of examples/bfcl/vehicle_control.world with BFCL's own VehicleControlAPI class.

Every BFCL v4 multi-turn base entry that involves VehicleControlAPI is replayed on both sides
(the harness is tests/bfcl_support.py): identical result text after every ground-truth call,
identical public state after every turn. One test per reproduced quirk follows, then a
bounded, derandomised hypothesis test of random call sequences with valid and invalid
arguments, which must reach the error paths.

The original's private attributes (``_parkingBrakeForce``, ``_slopeAngle``,
``_brakePedalForce``) are private state in the world: not compared as public state (BFCL
compares no ``_`` attribute), but compared here through the results that show them
(``displayCarStatus``, ``startEngine``'s check of the pedal's force).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from bfcl_support import Peer, parse_call
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from worldspec.services.loading import load_world

vehicle_control = pytest.importorskip(
    "bfcl_eval.eval_checker.multi_turn_eval.func_source_code.vehicle_control")

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "examples" / "bfcl" / "vehicle_control.world"
PEER = Peer("VehicleControlAPI", vehicle_control.VehicleControlAPI, SPEC, default_seed=141053)
ENTRIES = PEER.entries()
METHODS = PEER.methods


@pytest.fixture(scope="module")
def world() -> Any:
    return load_world(SPEC)


# ------------------------------------------------------------------ ground-truth replay

def test_entries_found() -> None:
    assert len(ENTRIES) == 50


@pytest.mark.parametrize(("entry", "turns"), ENTRIES, ids=[e["id"] for e, _ in ENTRIES])
def test_ground_truth_replays_identically(world: Any, entry: dict[str, Any],
                                          turns: list[list[str]]) -> None:
    replay = PEER.replay(world, entry, turns)
    assert replay.problems == []
    assert replay.identical == replay.calls


def test_replay_totals() -> None:
    """The ground truth holds the VehicleControlAPI calls we expect (a guard against silent
    skips)."""
    names = Counter(parse_call(text)[0] for _, turns in ENTRIES for turn in turns
                    for text in turn if parse_call(text)[0] in METHODS)
    assert sum(names.values()) == 314
    assert names["pressBrakePedal"] == 44 and names["lockDoors"] == 42


def test_every_tool_is_re_expressed(world: Any) -> None:
    assert set(world.TOOLS) == set(METHODS)


# ------------------------------------------------------------------ quirks, one by one

def _both(world: Any, config: dict[str, Any], calls: list[tuple[str, dict[str, Any]]]
          ) -> list[str]:
    return [outcome.text for outcome, _ in PEER.run_calls(world, config, calls)]


LOCKED = {"driver": "locked", "passenger": "locked", "rear_left": "locked",
          "rear_right": "locked"}
#: all doors locked, the brake fully pressed: startEngine("START") starts
READY = {"doorStatus": LOCKED, "brakePedalStatus": "pressed", "brakePedalForce": 1000.0,
         "fuelLevel": 10.0}
RUNNING = {**READY, "engineState": "running"}


@pytest.mark.parametrize(("name", "kwargs"), [
    ("startEngine", {}),
    ("lockDoors", {"unlock": True}),
    ("setCruiseControl", {"speed": 50, "activate": True}),
    ("adjustClimateControl", {"temperature": 20, "fan": 3}),
    ("find_nearest_tire_shop", {"city": "Rivermist"}),
])
def test_argument_errors_are_pythons(world: Any, name: str, kwargs: dict[str, Any]) -> None:
    """`arguments: python`: a missing or unexpected argument fails with the TypeError text the
    original's method raises."""
    ((outcome, error),) = PEER.run_calls(world, {}, [(name, kwargs)])
    assert outcome.raised and error is not None


def test_loading_renames_recounts_and_keeps_private(world: Any) -> None:
    """BFCL reads `engineState` into `engine_state`, ignores a given `remainingUnlockedDoors`
    (it counts the doors not locked) and keeps the forces and the slope in `_` attributes."""
    config = {"engineState": "running", "remainingUnlockedDoors": 0,
              "doorStatus": {"driver": "locked", "passenger": "unlocked", "rear_left": "locked",
                             "rear_right": "unlocked", "trunk": "locked"},
              "parkingBrakeForce": 15.3, "slopeAngle": 5, "brakePedalForce": 1}
    results = _both(world, config, [("displayCarStatus", {"option": "engine"}),
                                    ("displayCarStatus", {"option": "parkingBrake"}),
                                    ("displayCarStatus", {"option": "brakePedal"})])
    assert results == [json.dumps({"engineState": "running"}),
                       json.dumps({"parkingBrakeStatus": "released", "parkingBrakeForce": 15.3,
                                   "slopeAngle": 5}),
                       json.dumps({"brakePedalStatus": "released", "brakePedalForce": 1})]
    episode = PEER.ours(world, config)
    public = episode.export_state()
    assert public["engine_state"] == "running" and public["remainingUnlockedDoors"] == 1
    assert not {"engineState", "parkingBrakeForce", "slopeAngle", "brakePedalForce"} & set(public)
    private = episode.export_state(private=True)
    assert (private["parkingBrakeForce"], private["slopeAngle"]) == (15.3, 5)
    assert "engineState" not in private  # `from "engineState"`: loaded into engine_state


def test_the_attribute_name_is_not_a_scenario_key(world: Any) -> None:
    """BFCL ignores a scenario key `engine_state` (it reads `engineState`); the world's item
    loads from its alias only, so it ignores the key too; both given is refused."""
    results = _both(world, {"engine_state": "running"},
                    [("displayCarStatus", {"option": "engine"})])
    assert results == [json.dumps({"engineState": "stopped"})]
    with pytest.raises(ValueError, match='state "engine_state" is given twice'):
        world(data={"engine_state": "running", "engineState": "running"})


def test_private_state_is_hashed_not_exported(world: Any) -> None:
    """Two vehicles that differ only in a private force have the same public state but are
    different states, as BFCL's differ in `_parkingBrakeForce` and compare equal."""
    one, other = PEER.ours(world, {}), PEER.ours(world, {"parkingBrakeForce": 100.0})
    assert one.export_state() == other.export_state()
    assert one.state_hash() != other.state_hash()
    theirs = [PEER.original({}), PEER.original({"parkingBrakeForce": 100.0})]
    assert theirs[0] == theirs[1]  # BFCL's own __eq__ skips `_` attributes


def test_stop_stops_the_engine_and_is_refused_all_the_same(world: Any) -> None:
    results = _both(world, {**RUNNING, "doorStatus": {**LOCKED, "driver": "unlocked"}}, [
        ("startEngine", {"ignitionMode": "STOP"}),
        ("displayCarStatus", {"option": "engine"}),
        ("lockDoors", {"unlock": False, "door": ["driver"]}),
        ("startEngine", {"ignitionMode": "START"}),
        ("startEngine", {"ignitionMode": "STOP"}),
        ("startEngine", {"ignitionMode": "IDLE"})])
    assert results[0] == json.dumps({"error": "All doors must be locked before starting the "
                                              "engine. Here are the unlocked doors: driver"})
    assert results[1] == json.dumps({"engineState": "stopped"})
    assert json.loads(results[3])["engineState"] == "running"
    assert results[4] == results[5] == json.dumps({"error": "Invalid ignition mode."})


def test_the_brake_must_be_pressed_fully_and_int_forces_stay_ints(world: Any) -> None:
    results = _both(world, {"doorStatus": LOCKED}, [
        ("startEngine", {"ignitionMode": "START"}),
        ("pressBrakePedal", {"pedalPosition": 0.99}),
        ("startEngine", {"ignitionMode": "START"}),
        ("pressBrakePedal", {"pedalPosition": 1}),
        ("displayCarStatus", {"option": "brakePedal"}),
        ("startEngine", {"ignitionMode": "START"}),
        ("pressBrakePedal", {"pedalPosition": 0}),
        ("pressBrakePedal", {"pedalPosition": 1.5}),
        ("releaseBrakePedal", {})])
    assert "needs to be pressed" in results[0] and "fully" in results[2]
    assert results[3] == json.dumps({"brakePedalStatus": "pressed", "brakePedalForce": 1000.0})
    assert results[4] == json.dumps({"brakePedalStatus": "pressed", "brakePedalForce": 1000})
    assert results[6] == json.dumps({"brakePedalStatus": "released", "brakePedalForce": 0.0})
    assert "between 0 and 1" in results[7]


def test_fuel_keeps_python_number_types(world: Any) -> None:
    results = _both(world, {"fuelLevel": 20}, [
        ("fillFuelTank", {"fuelAmount": 30}),
        ("fillFuelTank", {"fuelAmount": 0.5}),
        ("fillFuelTank", {"fuelAmount": -1}),
        ("estimate_drive_feasibility_by_mileage", {"distance": 1000}),
        ("estimate_drive_feasibility_by_mileage", {"distance": 1000.5})])
    assert results[0] == json.dumps({"fuelLevel": 50})
    assert results[1] == json.dumps({"error": "Cannot fill gas above the tank capacity."})
    assert results[3] == json.dumps({"canDrive": True})
    assert results[4] == json.dumps({"canDrive": False})
    assert _both(world, {}, [("fillFuelTank", {"fuelAmount": 30})]) == [
        json.dumps({"fuelLevel": 30.0})]
    negative = _both(world, {"fuelLevel": -5}, [("fillFuelTank", {"fuelAmount": 1})])
    assert negative == [json.dumps({"error": "Fuel tank is empty. Min fuel level is 0 gallons."})]


def test_an_unknown_door_raises_after_the_doors_before_it_changed(world: Any) -> None:
    results = _both(world, {}, [
        ("lockDoors", {"unlock": False, "door": ["driver", "driver", "trunk", "passenger"]}),
        ("displayCarStatus", {"option": "doors"}),
        ("lockDoors", {"unlock": True, "door": ["it's"]}),
        ("lockDoors", {"unlock": True, "door": []})])
    assert results[0] == "Error during execution: 'trunk'"
    assert json.loads(results[1])["doorStatus"]["driver"] == "locked"
    assert results[2] == "Error during execution: \"it's\""
    assert results[3] == json.dumps({"lockStatus": "unlocked", "remainingUnlockedDoors": 3})


def test_the_door_count_follows_changes_not_the_map(world: Any) -> None:
    """Extra door keys in the scenario count as doors: the count can go below zero."""
    config = {"doorStatus": {**LOCKED, "driver": "unlocked", "trunk": "unlocked",
                             "hood": "unlocked"}}
    results = _both(world, config, [
        ("lockDoors", {"unlock": False, "door": ["driver", "trunk", "hood"]}),
        ("startEngine", {"ignitionMode": "START"})])
    assert results[0] == json.dumps({"lockStatus": "locked", "remainingUnlockedDoors": -2})
    assert "Brake pedal" in results[1]


def test_climate_reports_the_temperature_given_and_stores_celsius(world: Any) -> None:
    results = _both(world, {}, [
        ("adjustClimateControl", {"temperature": 68, "unit": "fahrenheit", "fanSpeed": 0}),
        ("displayCarStatus", {"option": "climate"}),
        ("adjustClimateControl", {"temperature": 21, "unit": "kelvin", "mode": "turbo"}),
        ("displayCarStatus", {"option": "climate"}),
        ("adjustClimateControl", {"temperature": 21, "fanSpeed": 101})])
    assert json.loads(results[0])["currentACTemperature"] == 68
    assert json.loads(results[1])["currentACTemperature"] == 20.0
    assert results[3] == json.dumps({"currentACTemperature": 21, "fanSpeed": 50,
                                     "climateMode": "turbo", "humidityLevel": 50.0})
    assert results[4] == json.dumps({"error": "Fan speed must be between 0 and 100."})


def test_a_fahrenheit_conversion_that_overflows_keeps_the_temperature(world: Any) -> None:
    """An int past the float range: the original stores it, then its conversion raises
    Python's OverflowError; the world's `error_of` + `fail keep` does the same (the harness
    compares the public state after the call)."""
    (result, status) = _both(world, {}, [
        ("adjustClimateControl", {"temperature": 10 ** 400, "unit": "fahrenheit"}),
        ("displayCarStatus", {"option": "climate"})])
    assert result == "Error during execution: integer division result too large for a float"
    assert json.loads(status)["currentACTemperature"] == 10 ** 400


def test_an_explicit_null_is_a_value_as_in_python(world: Any) -> None:
    """With `arguments: python` null is not the default: BFCL stores `mode: None`, takes a
    `unit: None` as Celsius and fails on `fanSpeed: None` with Python's TypeError."""
    results = _both(world, {}, [
        ("adjustClimateControl", {"temperature": 20, "mode": None}),
        ("adjustClimateControl", {"temperature": 20, "unit": None}),
        ("adjustClimateControl", {"temperature": 20, "fanSpeed": None})])
    assert json.loads(results[0])["climateMode"] is None
    assert json.loads(results[1])["climateMode"] == "auto"
    assert results[2] == ("Error during execution: '<=' not supported between instances of "
                          "'int' and 'NoneType'")


def test_parking_brake_release_tilts_the_slope_too(world: Any) -> None:
    results = _both(world, {}, [
        ("activateParkingBrake", {"mode": "engage"}),
        ("activateParkingBrake", {"mode": "release"}),
        ("displayCarStatus", {"option": "parkingBrake"}),
        ("activateParkingBrake", {"mode": "hold"})])
    assert results[1] == json.dumps({"parkingBrakeStatus": "released", "_parkingBrakeForce": 0.0,
                                     "_slopeAngle": 10.0})
    assert json.loads(results[2])["slopeAngle"] == 10.0
    assert results[3] == json.dumps({"error": "Invalid mode"})


def test_auto_headlights_are_off(world: Any) -> None:
    results = _both(world, {"headLightStatus": "on"}, [
        ("setHeadlights", {"mode": "auto"}), ("setHeadlights", {"mode": "on"}),
        ("setHeadlights", {"mode": "dim"}), ("displayCarStatus", {"option": "headlights"})])
    assert results[0] == json.dumps({"headlightStatus": "off"})
    assert results[2] == json.dumps({"error": "Invalid headlight mode."})


def test_cruise_control_keeps_the_distance_of_a_refused_speed(world: Any) -> None:
    results = _both(world, RUNNING, [
        ("setCruiseControl", {"speed": 62, "activate": True, "distanceToNextVehicle": 80}),
        ("setCruiseControl", {"speed": 65, "activate": True, "distanceToNextVehicle": 70}),
        ("setCruiseControl", {"speed": 7, "activate": False, "distanceToNextVehicle": 60}),
        ("setCruiseControl", {"speed": 125, "activate": True, "distanceToNextVehicle": 50.5})])
    assert results[0] == json.dumps({"error": "Invalid speed"})
    assert results[1] == json.dumps({"cruiseStatus": "active", "currentSpeed": 65.0,
                                     "distanceToNextVehicle": 70.0})
    assert json.loads(results[2])["cruiseStatus"] == "inactive"
    stopped = _both(world, {}, [("setCruiseControl", {"speed": 60, "activate": True,
                                                      "distanceToNextVehicle": 10})])
    assert stopped == [json.dumps({"error": "Start the engine before activating the cruise "
                                            "control."})]


def test_weather_com_answers_404_as_an_int(world: Any) -> None:
    assert _both(world, {}, [("get_outside_temperature_from_weather_com", {})]) == [
        json.dumps({"error": 404})]


def test_random_draws_are_bfcls(world: Any) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("get_outside_temperature_from_google", {}), ("get_current_speed", {})] * 3
    default = _both(world, {}, calls)
    seeded = _both(world, {"random_seed": 7}, calls)
    assert default != seeded and len(set(default)) == 6


def test_every_status_option_and_an_invalid_one(world: Any) -> None:
    options = ["fuel", "battery", "doors", "climate", "headlights", "parkingBrake",
               "brakePedal", "engine", "Fuel", ""]
    results = _both(world, {}, [("displayCarStatus", {"option": o}) for o in options])
    assert results[-2:] == [json.dumps({"error": "Invalid option"})] * 2


def test_distances_either_way_and_zip_codes(world: Any) -> None:
    results = _both(world, {}, [
        ("estimate_distance", {"cityA": "08540", "cityB": "94704"}),
        ("estimate_distance", {"cityA": "94704", "cityB": "08540"}),
        ("estimate_distance", {"cityA": "83214", "cityB": "83214"}),
        ("estimate_distance", {"cityA": "83214-74532", "cityB": ""}),
        ("get_zipcode_based_on_city", {"city": "Sunset Valley"}),
        ("get_zipcode_based_on_city", {"city": "Atlantis"}),
        ("set_navigation", {"destination": "1 Main St, Rivermist, CA"}),
        ("liter_to_gallon", {"liter": 10}), ("gallon_to_liter", {"gallon": 2.5})])
    assert results[0] == results[1] == json.dumps({"distance": 2550.0})
    assert results[2] == results[3] == json.dumps({"error": "distance not found in database."})
    assert results[5] == json.dumps({"zipcode": "00000"})


TIRES = ("frontLeftTirePressure", "frontRightTirePressure", "rearLeftTirePressure",
         "rearRightTirePressure")


def test_tire_pressure_health_is_the_mean(world: Any) -> None:
    for pressures, healthy in (((30, 30, 30, 30), True), ((35, 35, 35, 35.5), False),
                               ((22.0, 28.0, 30.0, 40.0), True), ((28, 28, 28, 28), False)):
        config = dict(zip(TIRES, pressures, strict=True))
        (text,) = _both(world, config, [("check_tire_pressure", {})])
        assert json.loads(text)["healthy_tire_pressure"] is healthy
        assert text.startswith(json.dumps({"frontLeftTirePressure": pressures[0]})[:-1])


@pytest.mark.parametrize(("name", "kwargs", "text"), [
    ("fillFuelTank", {"fuelAmount": "x"},
     "Error during execution: '<' not supported between instances of 'str' and 'int'"),
    ("fillFuelTank", {"fuelAmount": None},
     "Error during execution: '<' not supported between instances of 'NoneType' and 'int'"),
    ("pressBrakePedal", {"pedalPosition": [1]},
     "Error during execution: '<=' not supported between instances of 'int' and 'list'"),
    ("adjustClimateControl", {"temperature": 20, "fanSpeed": "high"},
     "Error during execution: '<=' not supported between instances of 'int' and 'str'"),
    ("estimate_drive_feasibility_by_mileage", {"distance": {"miles": 3}},
     "Error during execution: '<' not supported between instances of 'float' and 'dict'"),
    ("liter_to_gallon", {"liter": "3"},
     "Error during execution: can't multiply sequence by non-int of type 'float'"),
    ("gallon_to_liter", {"gallon": None},
     "Error during execution: unsupported operand type(s) for *: 'NoneType' and 'float'"),
    ("setCruiseControl", {"speed": None, "activate": True, "distanceToNextVehicle": 5},
     "Error during execution: float() argument must be a string or a real number, not "
     "'NoneType'"),
    ("liter_to_gallon", {"liter": 10 ** 400},
     "Error during execution: int too large to convert to float"),
    ("setCruiseControl", {"speed": 60, "activate": True, "distanceToNextVehicle": -10 ** 400},
     "Error during execution: int too large to convert to float"),
    ("lockDoors", {"unlock": True, "door": 3},
     "Error during execution: 'int' object is not iterable"),
    ("estimate_distance", {"cityA": 83214, "cityB": "74532"},
     json.dumps({"error": "distance not found in database."})),
    ("displayCarStatus", {"option": ["fuel"]}, json.dumps({"error": "Invalid option"})),
    ("setHeadlights", {"mode": True}, json.dumps({"error": "Invalid headlight mode."})),
    ("activateParkingBrake", {"mode": 1}, json.dumps({"error": "Invalid mode"})),
])
def test_wrong_json_types_fail_with_the_originals_text(world: Any, name: str,
                                                       kwargs: dict[str, Any], text: str) -> None:
    """Where the original's failure depends on the value alone, the parameter's `else` message
    is the original's text (a Python TypeError, or its own error dict)."""
    ((outcome, error),) = PEER.run_calls(world, {}, [(name, kwargs)])
    assert outcome.text == text and error is not None


# ------------------------------------------------------------------ random differential

CRAFTED: list[dict[str, Any]] = [
    RUNNING,
    {},
    READY,
    {**RUNNING, "cruiseStatus": "active", "fuelLevel": 45},
    {**READY, "brakePedalForce": 500},
    {"fuelLevel": 20, "fanSpeed": 70, "acTemperature": 22, "random_seed": 11,
     "frontLeftTirePressure": 30, "rearRightTirePressure": 36, "parkingBrakeForce": 100,
     "doorStatus": {**LOCKED, "trunk": "unlocked"}},
]
CONFIGS = st.one_of(st.sampled_from(CRAFTED), st.sampled_from([PEER.config(e) for e, _ in ENTRIES]))
NUMBERS = st.sampled_from([30, 0, 1, 0.5, 5, 10, 45.5, 50, 60, 65, 120, 125, -1, -10.0, 1000,
                           0.99, 2.2, 62.5])
DOORS = st.lists(st.sampled_from(["driver", "passenger", "rear_left", "rear_right", "trunk"]),
                 max_size=4)
CITIES = st.sampled_from(["83214", "74532", "94016", "08540", "94704", "62947", "00000", ""])

CALLS = st.one_of(
    st.builds(lambda m: ("startEngine", {"ignitionMode": m}),
              st.sampled_from(["START", "STOP", "start", ""])),
    st.builds(lambda a: ("fillFuelTank", {"fuelAmount": a}),
              st.sampled_from([-1, 30, 0.5, 5, 50, 10, 45.5, -0.5])),
    st.builds(lambda u, d: ("lockDoors", {"unlock": u, "door": d}), st.booleans(), DOORS),
    st.builds(lambda t, u, f, m: ("adjustClimateControl", {"temperature": t, "unit": u,
                                                           "fanSpeed": f, "mode": m}),
              NUMBERS, st.sampled_from(["celsius", "fahrenheit", "kelvin"]),
              st.sampled_from([0, 50, 100, 101, -1]), st.sampled_from(["auto", "cool", "x"])),
    st.builds(lambda m: ("setHeadlights", {"mode": m}), st.sampled_from(["on", "off", "auto",
                                                                         "dim"])),
    st.builds(lambda o: ("displayCarStatus", {"option": o}),
              st.sampled_from(["fuel", "battery", "doors", "climate", "headlights",
                               "parkingBrake", "brakePedal", "engine", "tires"])),
    st.builds(lambda m: ("activateParkingBrake", {"mode": m}),
              st.sampled_from(["engage", "release", "hold"])),
    st.builds(lambda p: ("pressBrakePedal", {"pedalPosition": p}),
              st.sampled_from([0, 0.0, 0.5, 0.99, 1, 1.0, 1.5, -0.5])),
    st.builds(lambda s, a, d: ("setCruiseControl", {"speed": s, "activate": a,
                                                    "distanceToNextVehicle": d}),
              st.sampled_from([62.5, 65, 0, 120, 125, -5, 7, 30.0]),
              st.sampled_from([True, False]), NUMBERS),
    st.builds(lambda d: ("estimate_drive_feasibility_by_mileage", {"distance": d}), NUMBERS),
    st.builds(lambda x: ("liter_to_gallon", {"liter": x}), NUMBERS),
    st.builds(lambda x: ("gallon_to_liter", {"gallon": x}), NUMBERS),
    st.builds(lambda a, b: ("estimate_distance", {"cityA": a, "cityB": b}), CITIES, CITIES),
    st.builds(lambda c: ("get_zipcode_based_on_city", {"city": c}),
              st.sampled_from(["Rivermist", "San Francisco", "Atlantis"])),
    st.builds(lambda d: ("set_navigation", {"destination": d}),
              st.sampled_from(["Rivermist", "1 Main St, Oakendale, CA", ""])),
    st.builds(lambda ms: ("display_log", {"messages": ms}),
              st.lists(st.sampled_from(["ok", "low fuel", ""]), max_size=3)),
    st.just(("releaseBrakePedal", {})),
    st.just(("get_outside_temperature_from_google", {})),
    st.just(("get_outside_temperature_from_weather_com", {})),
    st.just(("get_current_speed", {})),
    st.just(("check_tire_pressure", {})),
    st.just(("find_nearest_tire_shop", {})),
)


def _kind(text: str) -> str | None:
    """Which error path a result took (the original's text), or None for a success."""
    if text.startswith("Error during execution: "):
        return "raised: " + text.removeprefix("Error during execution: ")[:20]
    if text.startswith("{\"error\": "):
        return " ".join(str(json.loads(text)["error"]).split()[:3])
    return None


def test_random_calls_agree(world: Any) -> None:
    """Random call sequences give identical text and state after every call, and reach the
    error paths (each a different message of the original)."""
    reached: Counter[str] = Counter()

    @settings(max_examples=300, derandomize=True, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture,
                                     HealthCheck.too_slow])
    @given(config=CONFIGS, calls=st.lists(CALLS, min_size=3, max_size=25))
    def agree(config: dict[str, Any], calls: list[tuple[str, dict[str, Any]]]) -> None:
        for outcome, _ in PEER.run_calls(world, config, calls):
            kind = _kind(outcome.text)
            if kind is not None:
                reached[kind] += 1

    agree()
    assert sum(reached.values()) >= 100
    assert len(reached) >= 12, sorted(reached)
    for path in ("All doors must", "Brake pedal needs", "Must press the", "Invalid ignition",
                 "Cannot fill gas", "Fuel amount cannot", "Fan speed must", "Invalid speed",
                 "Start the engine", "Pedal position must", "distance not found",
                 "raised: 'trunk'", "404"):
        assert any(kind.startswith(path) for kind in reached), (path, reached)
