"""Suite-affine xdist scheduling (``pytest_egi.collect.scheduling``): each suite's items go to as few
workers as the load allows, so a worker builds only the worlds of its own suites."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_egi.collect.scheduling import (
    DURATIONS_FILE,
    SuiteAffineScheduling,
    declared_seconds,
    read_declared,
    read_durations,
    read_groups,
    read_packages,
    write_durations,
    write_groups,
)
from tests.test_worker_prepare import _prepared, _with_prepare


class FakeNode:
    """What the scheduler calls on an xdist ``WorkerController``."""

    def __init__(self, name: str) -> None:
        self.gateway = SimpleNamespace(id=name)
        self.shutting_down = False
        self.sent: list[list[int]] = []
        self.steals: list[list[int]] = []

    def send_runtest_some(self, indices):
        self.sent.append(list(indices))

    def send_steal(self, indices):
        self.steals.append(list(indices))

    def shutdown(self):
        self.shutting_down = True

    def __repr__(self) -> str:
        return self.gateway.id


def _config(workers: int) -> SimpleNamespace:
    return SimpleNamespace(getvalue=lambda name: [f"{workers}*popen"] if name == "tx" else None,
                           stash={})  # fmt: skip


def _scheduler(counts: dict[str, int], workers: int = 2, expected: dict[str, float] | None = None,
               declared: dict[str, float] | None = None):  # fmt: skip
    """A scheduler over suites of ``counts`` items each (collection order as given), its nodes
    added and their collections in, initial queues sent."""
    collection = [f"suites/{s}/test_{s}.py::test_task[{s}-{k}]" for s, n in counts.items() for k in range(n)]
    sched = SuiteAffineScheduling(_config(workers), groups=lambda ids: [i.split("/")[1] for i in ids],
                                  expected=expected, declared=declared)
    nodes = [FakeNode(f"gw{i}") for i in range(workers)]
    for node in nodes:
        sched.add_node(node)
    for node in nodes:
        sched.add_node_collection(node, collection)
    sched.schedule()
    return sched, nodes


def test_initial_queues_are_whole_suites_largest_first_to_the_least_loaded():
    """a (6 items) to gw0; b (4) to gw1; c (3) to gw1, which has fewer items (4 < 6)."""
    sched, (gw0, gw1) = _scheduler({"a": 6, "b": 4, "c": 3})
    assert gw0.sent == [[0, 1, 2, 3, 4, 5]]
    assert gw1.sent == [[6, 7, 8, 9, 10, 11, 12]]
    assert gw0.steals == gw1.steals == []
    assert sched.node2groups == {gw0: {"a"}, gw1: {"b", "c"}}


def test_learned_item_times_place_the_longest_suite_first():
    """Work = items x mean seconds: b 4 x 3.0 = 12 to gw0; a 6 x 1.0 = 6 to gw1; c 3 x 1.0 = 3
    to gw1 (6 < 12)."""
    sched, (gw0, gw1) = _scheduler({"a": 6, "b": 4, "c": 3}, expected={"a": 1.0, "b": 3.0, "c": 1.0})
    assert gw0.sent == [[6, 7, 8, 9]]
    assert gw1.sent == [[0, 1, 2, 3, 4, 5, 10, 11, 12]]


def test_a_suite_not_seen_yet_counts_the_mean_item_time_of_those_seen():
    """c unknown: (0.1 + 3.0) / 2 = 1.55 s per item, 4.65 in all; b 12 to gw0, c 4.65 to gw1,
    a 0.6 to gw1."""
    sched, (gw0, gw1) = _scheduler({"a": 6, "b": 4, "c": 3}, expected={"a": 0.1, "b": 3.0})
    assert gw0.sent == [[6, 7, 8, 9]]
    assert gw1.sent == [[10, 11, 12, 0, 1, 2, 3, 4, 5]]


def test_a_first_run_places_suites_by_their_declared_item_times():
    """Nothing learned: a declares 6 x 0.1 = 0.6 s in all, b 4 x 3.0 = 12 s; c declares
    nothing and counts the mean declared item time, (0.1 + 3.0) / 2 = 1.55 s, x 3 = 4.65 s.
    b to gw0, c then a to gw1 (by item counts a, 6 items, would have gone to gw0 first)."""
    sched, (gw0, gw1) = _scheduler({"a": 6, "b": 4, "c": 3}, declared={"a": 0.6, "b": 12.0})
    assert gw0.sent == [[6, 7, 8, 9]]
    assert gw1.sent == [[10, 11, 12, 0, 1, 2, 3, 4, 5]]


def test_learned_item_times_win_over_declared_ones():
    """b declares 12 s but its learned mean is 0.1 s (0.4 s in all): a (6 x 1.0 learned) to
    gw0, c (3 items, mean learned (1.0 + 0.1) / 2 = 0.55 -> 1.65 s) and b to gw1."""
    sched, (gw0, gw1) = _scheduler({"a": 6, "b": 4, "c": 3}, expected={"a": 1.0, "b": 0.1},
                                   declared={"b": 12.0})  # fmt: skip
    assert gw0.sent == [[0, 1, 2, 3, 4, 5]]
    assert gw1.sent == [[10, 11, 12, 6, 7, 8, 9]]


def test_declared_item_times_reach_the_controller_in_the_groups_file(tmp_path):
    """A suite's declared total is the sum over its items, written only when every item of it
    has one; read back only for the same collection."""
    ids = ["s/a/t.py::t[a-0]", "s/a/t.py::t[a-1]", "s/a/t.py::plain", "s/b/t.py::t[b-0]", "s/b/t.py::t[b-1]"]
    write_groups(tmp_path, ids, ["a", "a", None, "b", "b"], [0.5, 0.25, None, 1.0, None])
    assert read_declared(tmp_path, ids) == {"suite:a": 0.75}
    assert read_declared(tmp_path, ids[:3]) == {}
    assert read_declared(None, ids) == {}


def test_an_items_declared_time_is_its_categorys_else_the_default():
    suite = SimpleNamespace(item_seconds={"slow": 2.0, "*": 0.1})
    assert declared_seconds(suite, "slow") == 2.0
    assert declared_seconds(suite, "other") == 0.1
    assert declared_seconds(SimpleNamespace(item_seconds={"slow": 2.0}), "other") is None
    assert declared_seconds(SimpleNamespace(), "slow") is None
    for bad in (-1, "2", True, float("nan")):  # a hint: a bad value is no value, not an error
        assert declared_seconds(SimpleNamespace(item_seconds={"*": bad}), "x") is None


def _affinity_scheduler(packages):
    collection = [f"s/{g}/t.py::t[{k}]" for g, n in (("a", 6), ("b", 5), ("c", 4)) for k in range(n)]
    sched = SuiteAffineScheduling(_config(2), groups=lambda ids: [i.split("/")[1] for i in ids],
                                  packages=packages)  # fmt: skip
    nodes = [FakeNode("gw0"), FakeNode("gw1")]
    for node in nodes:
        sched.add_node(node)
    for node in nodes:
        sched.add_node_collection(node, collection)
    sched.schedule()
    return nodes


def test_a_suite_joins_the_worker_whose_suites_import_the_same_packages_when_loads_are_near():
    """a (6) to gw0, b (5) to gw1; c (4) shares "sdk" with a: gw0 is within the slack (6 <= 5 +
    0.2 * 15 / 2), so c joins a there; without learned packages c goes to the least loaded."""
    gw0, gw1 = _affinity_scheduler({"a": frozenset({"sdk", "x"}), "c": frozenset({"sdk"})})
    assert gw0.sent == [[0, 1, 2, 3, 4, 5, 11, 12, 13, 14]]
    assert gw1.sent == [[6, 7, 8, 9, 10]]
    gw0, gw1 = _affinity_scheduler(None)
    assert gw0.sent == [[0, 1, 2, 3, 4, 5]]
    assert gw1.sent == [[6, 7, 8, 9, 10, 11, 12, 13, 14]]


def test_item_times_are_kept_per_model_for_the_next_run(tmp_path):
    sched, (gw0, gw1) = _scheduler({"a": 2, "b": 2})
    for node, index, seconds in ((gw0, 0, 5.0), (gw0, 1, 1.0), (gw1, 2, 0.5), (gw1, 3, 0.5)):
        sched.mark_test_complete(node, index, seconds)
    assert sched.totals() == {"a": (6.0, 2), "b": (1.0, 2)}
    write_durations(tmp_path, "egi/oracle", {"a": (6.0, 2)})
    write_durations(tmp_path, "gpt-4o-mini", {"a": (40.0, 2)})
    write_durations(tmp_path, "egi/oracle", {"b": (1.0, 2)}, {"b": ["sdk", "numpy"]})  # keeps a's
    write_durations(tmp_path, "egi/oracle", {"b": (1.0, 2)}, {"b": ["yaml"]})  # packages add up
    assert read_durations(tmp_path, "egi/oracle") == {"a": 3.0, "b": 0.5}
    assert read_packages(tmp_path) == {"b": frozenset({"numpy", "sdk", "yaml"})}
    assert read_durations(tmp_path, "gpt-4o-mini") == {"a": 20.0}
    assert read_durations(tmp_path, "egi/null") == {}
    (tmp_path / DURATIONS_FILE).write_text("{not json")
    assert read_durations(tmp_path, "egi/oracle") == {}
    assert read_durations(None, "egi/oracle") == {}


def test_an_idle_worker_steals_a_whole_suite_the_other_has_not_started():
    """gw0 runs out (one item left) while gw1 runs b: gw0 asks for c, all of it (3 items, at
    most half of gw1's 7), and gets it; b stays whole on gw1."""
    sched, (gw0, gw1) = _scheduler({"a": 6, "b": 4, "c": 3})
    for index in range(5):
        sched.mark_test_complete(gw0, index)
    assert gw1.steals == [[10, 11, 12]]
    sched.remove_pending_tests_from_node(gw1, [10, 11, 12])  # gw1 gave them back
    assert gw0.sent == [[0, 1, 2, 3, 4, 5], [10, 11, 12]]
    assert sched.node2pending == {gw0: [5, 10, 11, 12], gw1: [6, 7, 8, 9]}
    assert sched.node2groups[gw0] == {"a", "c"}


def test_a_suite_too_big_to_move_whole_is_split_from_its_end():
    """One suite of 10 items, two workers: gw0 gets them all, gw1 (idle) takes the last half."""
    sched, (gw0, gw1) = _scheduler({"a": 10})
    assert gw0.sent == [list(range(10))]
    assert gw0.steals == [[5, 6, 7, 8, 9]]
    sched.remove_pending_tests_from_node(gw0, [5, 6, 7, 8, 9])
    assert gw1.sent == [[5, 6, 7, 8, 9]]


def test_a_thief_takes_items_of_a_suite_it_holds_first():
    """gw0's queue: its running and next a-items, then a, b, a, b, a (b started on gw0 too).
    No whole suite can move; gw1, which holds b, asks for the last two b items, not a's."""
    sched, (gw0, gw1) = _scheduler({"a": 6, "b": 3})
    sched.node2pending[gw0][:] = [0, 1, 2, 6, 3, 7, 4]
    sched.node2started[gw0] = {"a", "b"}
    sched.node2pending[gw1][:] = []
    sched.node2groups[gw1] = {"b"}
    assert sched.steal_choice(gw0, gw1, 2) == [6, 7]
    assert sched.steal_choice(gw0, gw1, 3) == [6, 7, 4]


def test_a_thief_does_not_split_a_suite_whose_start_outweighs_its_items():
    """gw0 runs a (8 items): its first item took 5 s (the world's build), the next 0.1 s each.
    gw1, idle after b, could take 3 a-items (0.3 s of work for a 5 s start): it does not, and
    is told to finish. Had a's start been 0.2 s, it would take them."""
    for first, expected in ((5.0, []), (0.2, [[5, 6, 7]])):
        sched, (gw0, gw1) = _scheduler({"a": 8, "b": 2})
        sched.mark_test_complete(gw0, 0, first)
        sched.mark_test_complete(gw0, 1, 0.1)
        sched.mark_test_complete(gw1, 8, 0.1)  # gw1: one item left, idle
        assert gw0.steals == expected
        assert gw1.shutting_down is (not expected)


def test_nothing_left_to_steal_shuts_the_idle_worker_down():
    """gw1 is down to its last item while gw0 has only its running and next item: nothing may
    be stolen, so gw1 is told to finish (xdist's ``shutdown``)."""
    sched, (gw0, gw1) = _scheduler({"a": 3, "b": 2})
    sched.mark_test_complete(gw0, 0)
    sched.mark_test_complete(gw1, 3)
    assert gw0.steals == gw1.steals == []
    assert gw1.shutting_down and not gw0.shutting_down


def test_groups_file_is_used_only_for_the_same_collection(tmp_path):
    ids = ["s/a/test_a.py::test_task[a-0]", "s/a/test_a.py::test_plain", "s/b/test_b.py::test_task[b-0]"]
    write_groups(tmp_path, ids, ["a", None, "b"])
    assert read_groups(tmp_path, ids) == ["suite:a", "module:s/a/test_a.py", "suite:b"]
    assert read_groups(tmp_path, ids[:2]) == ["module:s/a/test_a.py", "module:s/a/test_a.py"]
    assert read_groups(None, ids[2:]) == ["module:s/b/test_b.py"]


SECOND_ROUTES = """\
  - {suite: toy2, sub_metric: acc_alpha, bucket: M1, transform: fraction}
  - {suite: toy2, sub_metric: acc, bucket: M4, transform: fraction}
"""


SLOW = """

import time as _time

_score = ToySuite.score


def _slow_score(self, task, trajectory, options, judge=None):
    _time.sleep(1.5)
    return _score(self, task, trajectory, options, judge)


ToySuite.score = _slow_score
"""


def _two_suites(pytester: pytest.Pytester) -> None:
    """``toy`` with 4 fast items, and ``toysuites/toy2``: the toy suite again, named ``toy2``,
    with its own routes and 2 items that take 1.5 s each."""
    _with_prepare(pytester)
    toy = pytester.path / "toysuites" / "toy"
    toy2 = pytester.path / "toysuites" / "toy2"
    toy2.mkdir()
    init = (toy / "__init__.py").read_text().replace('name = "toy"', 'name = "toy2"')
    (toy2 / "__init__.py").write_text(init + SLOW)
    test = (toy / "test_toy.py").read_text().replace("toysuites.toy ", "toysuites.toy2 ")
    (toy2 / "test_toy2.py").write_text(test)
    routing = pytester.path / "routing.yaml"
    text = routing.read_text().replace("suites: [toy, absent]", "suites: [toy, toy2, absent]")
    routing.write_text(text.replace("modes:", SECOND_ROUTES + "modes:").replace(
        "      toy: {per_category: 3}", "      toy: {per_category: 2}\n      toy2: {per_category: 1}"))


@pytest.mark.parametrize("dist", [[], ["--dist", "worksteal"]], ids=["chosen", "explicit-worksteal"])
def test_each_worker_prepares_one_suite_at_n_2(toy_project, dist):
    """``toy`` (4 items) and ``toy2`` (2 slow items), two workers: each worker prepares one
    suite, and no item is stolen (``toy``'s worker is done before ``toy2``'s first item is).
    ``worksteal`` (kept when asked for) gives one worker 3 ``toy`` items and the other the
    last ``toy`` item and both ``toy2`` items: three prepares or more."""
    _two_suites(toy_project)
    result = toy_project.runpytest_subprocess(
        "toysuites", "--egi-model", "egi/oracle", "--egi-bootstrap", "0", "--egi-no-cache", "-n", "2", *dist)
    result.assert_outcomes(passed=6)
    lines = _prepared(toy_project)
    pids = [line.split(" ", 1)[0] for line in lines]
    if dist:
        assert len(lines) >= 3, lines
    else:
        tasks = sorted(line.split(" ", 1)[1] for line in lines)
        assert tasks == ["alpha-0 alpha-1 beta-0 beta-1", "alpha-0 beta-0"], lines
        assert len(set(pids)) == 2, lines


def test_an_n_2_run_records_each_suites_item_time_in_the_task_cache(toy_project, tmp_path):
    _two_suites(toy_project)
    cache = tmp_path / "cache"
    result = toy_project.runpytest_subprocess(
        "toysuites", "--egi-model", "egi/oracle", "--egi-bootstrap", "0", "--egi-cache", str(cache),
        "-n", "2")
    result.assert_outcomes(passed=6)
    data = json.loads((cache / "tasks" / DURATIONS_FILE).read_text())
    assert sorted(data["seconds"]) == ["egi/oracle quick"]  # per model and profile
    seconds = data["seconds"]["egi/oracle quick"]
    assert {g: n for g, (_s, n) in seconds.items()} == {"suite:toy": 4, "suite:toy2": 2}
    assert all(total > 0 for total, _n in seconds.values())
    assert sorted(data["packages"]) == ["suite:toy", "suite:toy2"]  # what each first item imported


def test_an_items_group_is_one_string_per_group_not_per_item(tmp_path):
    """The controller holds a group for each item (20,000 items: 20,000 entries): one string
    object per suite or module, not a string of its own per item."""
    ids = [f"s/a/test_a.py::test_task[a-{i}]" for i in range(3)]
    ids += [f"s/b/test_b.py::test_x[{i}]" for i in range(2)]
    write_groups(tmp_path, ids, ["a", "a", "a", None, None])
    groups = read_groups(tmp_path, ids)
    assert groups == ["suite:a"] * 3 + ["module:s/b/test_b.py"] * 2
    assert groups[0] is groups[1] is groups[2] and groups[3] is groups[4]
    plain = read_groups(None, ids)
    assert plain[0] is plain[2] and plain[3] is plain[4]


PLACED_BY_COUNTS = ("egi: xdist suite-affine work stealing, suites placed by declared item times, else item "
                    "counts (no item times learned for this model and profile); --dist to choose")
PLACED_BY_TIMES = ("egi: xdist suite-affine work stealing, suites placed by learned item times (last -n run, "
                   "same model and profile); --dist to choose")


def test_the_header_says_whether_suites_are_placed_by_learned_times_or_item_counts(
    toy_project, tmp_path, monkeypatch
):
    """A first ``-n 2`` run (no durations file) places by item counts; a second of the same
    model and profile by the first one's times; another profile, or another model, has none
    learned yet."""
    repo = Path(__file__).resolve().parents[1]  # this checkout's pytest_egi, not an installed one
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(repo), os.environ.get("PYTHONPATH")])))
    cache = tmp_path / "cache"

    def header(model: str = "egi/oracle", *extra: str) -> list[str]:
        result = toy_project.runpytest_subprocess(
            "toysuites", "--egi-model", model, "--egi-bootstrap", "0", "--egi-cache", str(cache),
            "-n", "2", "-v", *extra)  # fmt: skip
        assert result.ret in (0, 1), result.stdout.str()
        return [line for line in result.stdout.lines if line.startswith("egi: xdist")]

    assert header() == [PLACED_BY_COUNTS]
    assert "egi/oracle quick" in json.loads((cache / "tasks" / DURATIONS_FILE).read_text())["seconds"]
    assert header() == [PLACED_BY_TIMES]
    assert header("egi/oracle", "--egi-mode", "deep") == [PLACED_BY_COUNTS]
    assert header("egi/null") == [PLACED_BY_COUNTS]
    # scheduling internals are for -v: the default header has none of them
    assert header("egi/null", "-q") == []
