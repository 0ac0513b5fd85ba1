"""The generated PersonaBench world: noise shares, gold that states the answer, the release
layout round trip, and clear errors on malformed release files."""

from __future__ import annotations

import ast
import json

import pytest

from pytest_egi.suite import SuiteProfile
from suites.personabench import SUITE, PersonaBenchOptions
from suites.personabench.data import community, dump_world, person_chunks
from suites.personabench.data.generator import NOISE_LEVELS
from suites.personabench.scorer import word_set, words

SPEC = {"seed": 42, "communities": 2, "people": 10}


@pytest.fixture(scope="module")
def communities():
    return {c: community(SPEC, c) for c in (0, 1)}


def _sessions(comm, name, level):
    chunks, ids = person_chunks(SPEC, comm_index(comm), name, level)
    return dict(zip(ids, chunks, strict=True))


def comm_index(comm) -> int:
    return int(comm["eval_info_all"][0]["Eval_Info"]["qa"][0]["q_id"][:3])


def test_ids_follow_upstreams_schemes(communities):
    comm = communities[1]
    person = comm["eval_info_all"][2]
    assert all(qa["q_id"].startswith("001002") and len(qa["q_id"]) == 9 for qa in person["Eval_Info"]["qa"])
    ids = list(_sessions(comm, person["Name"], 0.3))
    assert all(len(s) == 12 and s.startswith("001002") for s in ids) and len(set(ids)) == len(ids)
    assert len(comm["social_graph"]["nodes"]) == 10 and len(comm["social_graph"]["edges"]) == 22


@pytest.mark.parametrize("level", NOISE_LEVELS)
def test_noise_level_is_the_share_of_sessions_with_no_answer(communities, level):
    for comm in communities.values():
        gold = {
            s
            for g in comm["noise"][level]["qa_gt_context_all"]
            for alts in g["segment_id"].values()
            for s in alts
        }
        for person in comm["eval_info_all"]:
            sessions = _sessions(comm, person["Name"], level)
            empty = sum(1 for sid in sessions if sid not in gold)
            assert abs(empty / len(sessions) - level) <= 0.02, (person["Name"], level, empty, len(sessions))


def test_every_gold_segment_states_the_answer(communities):
    for comm in communities.values():
        for level in NOISE_LEVELS:
            lv = comm["noise"][level]
            for g in lv["qa_gt_context_all"]:
                name = next(
                    p["Name"]
                    for p in comm["eval_info_all"]
                    if p["Eval_Info"]["qa"][0]["q_id"][:6] == g["q_id"][:6]
                )
                sessions = _sessions(comm, name, level)
                seen: set[str] = set()
                for key, alts in g["segment_id"].items():
                    item = ast.literal_eval(key) if key.startswith("((") else key
                    want = word_set([dict(item)]) if isinstance(item, tuple) else words(item)
                    for sid in alts:
                        text = words(json.loads(sessions[sid]).__repr__()) | words(sessions[sid])
                        assert want <= text, (g["q_id"], key, sid)
                        seen |= text
                assert word_set(g["answer"]) <= seen, g["q_id"]


def test_outdated_value_is_stated_before_its_replacement(communities):
    comm = communities[0]
    qa = next(q for q in comm["eval_info_all"][0]["Eval_Info"]["qa"] if q["outdated_value"])
    old = qa["outdated_value"][0]
    sessions = _sessions(comm, comm["eval_info_all"][0]["Name"], 0.0)
    mentions = [json.loads(t)["time"] for t in sessions.values() if old in t]
    assert any("used to prefer " + old in t for t in sessions.values())
    assert len(mentions) >= 2  # the earlier liking and the later change


def test_release_layout_round_trip(tmp_path):
    """A generated world written in the release layout loads through ``data_dir`` to the same
    questions and gold (the reference reader then finds no probe: it is not a ceiling there)."""
    spec = {"seed": 7, "communities": 1, "people": 3}
    root = dump_world(spec, tmp_path)
    profile = SuiteProfile(seed=7, people=3, communities=[0], noise_levels=[0.0, 0.7])
    generated = SUITE.load_tasks(profile, PersonaBenchOptions(communities=1))
    loaded = SUITE.load_tasks(profile, PersonaBenchOptions(data_dir=root))
    assert [t.id for t in loaded] == [t.id for t in generated]
    for a, b in zip(generated, loaded, strict=True):
        assert (a.data["answer"], a.data["gold_segments"]) == (b.data["answer"], b.data["gold_segments"])
        assert person_chunks(a.data["world"], 0, a.data["person"], a.data["noise"]) == person_chunks(
            b.data["world"], 0, b.data["person"], b.data["noise"]
        )


def test_malformed_release_file_names_file_field_and_fix(tmp_path):
    root = dump_world({"seed": 7, "communities": 1, "people": 3}, tmp_path)
    gt = root / "synthetic_data" / "community_0" / "eval_info" / "qa_gt_context_all_noise_0.0.json"
    rows = json.loads(gt.read_text())
    rows[3]["segment_id"] = ["000000000001"]
    gt.write_text(json.dumps(rows))
    profile = SuiteProfile(seed=7, people=3, communities=[0], noise_levels=[0.0])
    with pytest.raises(ValueError) as err:
        SUITE.load_tasks(profile, PersonaBenchOptions(data_dir=root / "synthetic_data" / ".."))
    text = str(err.value)
    assert str(gt.name) in text and "[3].segment_id" in text and "Fix:" in text


def test_quick_profile_has_three_people_of_two_communities_at_two_levels():
    tasks = SUITE.load_tasks(
        SuiteProfile(seed=42, people=3, communities=[0, 1], noise_levels=[0.0, 0.7]), None
    )
    assert {(t.data["community"], t.data["person"]) for t in tasks} == {
        (c, p["Name"]) for c in (0, 1) for p in community(SPEC, c)["eval_info_all"][:3]
    }
    assert {t.data["noise"] for t in tasks} == {0.0, 0.7}
    assert all(t.data["type"] != "Subjective" for t in tasks)
    assert len(tasks) == 440
