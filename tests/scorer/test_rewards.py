"""hemra.services.scorer.rewards: reward.json / reward.txt and the scorer fingerprint."""

import pytest

from hemra.services.scorer.rewards import RewardError, fingerprint, parse_reward_json, parse_reward_txt

# --- reward.json ----------------------------------------------------------------


def test_parse_reward_json__multi_key():
    assert parse_reward_json(b'{"reward": 0.5, "tests_passed": 3, "style": 1.0}') == {
        "reward": 0.5,
        "tests_passed": 3,
        "style": 1.0,
    }


def test_parse_reward_json__ints_stay_int():
    rewards = parse_reward_json(b'{"reward": 1, "partial": 0.25}')
    assert type(rewards["reward"]) is int
    assert type(rewards["partial"]) is float


def test_parse_reward_json__whitespace_around_is_fine():
    assert parse_reward_json(b'\n  {"reward": 0}\n\n') == {"reward": 0}


@pytest.mark.parametrize("data", [b"", b"   \n\t"])
def test_parse_reward_json__empty(data):
    with pytest.raises(RewardError, match="reward.json is empty"):
        parse_reward_json(data)


@pytest.mark.parametrize("data", [b"reward: 1", b'{"reward": 1', b"\xff\xfe\x00garbage"])
def test_parse_reward_json__not_json(data):
    with pytest.raises(RewardError, match="reward.json is not JSON"):
        parse_reward_json(data)


@pytest.mark.parametrize("data", [b"1.0", b"[1, 2]", b'"reward"', b"null", b"{}"])
def test_parse_reward_json__not_an_object(data):
    with pytest.raises(RewardError, match="non-empty JSON object"):
        parse_reward_json(data)


@pytest.mark.parametrize("value", ['"1.0"', "null", "[1]", '{"a": 1}'])
def test_parse_reward_json__non_number_value(value):
    with pytest.raises(RewardError, match="'reward' is not a finite number"):
        parse_reward_json(f'{{"ok": 1, "reward": {value}}}'.encode())


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_parse_reward_json__nan_and_inf(value):
    with pytest.raises(RewardError, match="not a finite number"):
        parse_reward_json(f'{{"reward": {value}}}'.encode())


@pytest.mark.parametrize("value", ["true", "false"])
def test_parse_reward_json__bool_refused(value):
    with pytest.raises(RewardError, match="'reward' is not a finite number"):
        parse_reward_json(f'{{"reward": {value}}}'.encode())


def test_parse_reward_json__huge_integer_refused():
    with pytest.raises(RewardError):
        parse_reward_json(b'{"reward": 1' + b"0" * 400 + b"}")


# --- reward.txt -----------------------------------------------------------------


@pytest.mark.parametrize("data,expected", [(b"1", 1.0), (b"0.75\n", 0.75), (b"  0 \n\n", 0.0), (b"-2.5\r\n", -2.5)])
def test_parse_reward_txt__number_with_whitespace(data, expected):
    rewards = parse_reward_txt(data)
    assert rewards == {"reward": expected}
    assert type(rewards["reward"]) is float


@pytest.mark.parametrize("data", [b"", b" \n "])
def test_parse_reward_txt__empty(data):
    with pytest.raises(RewardError, match="reward.txt is empty"):
        parse_reward_txt(data)


@pytest.mark.parametrize("data", [b"pass", b"1 2", b"0.5\nextra", b"\xff"])
def test_parse_reward_txt__not_a_number(data):
    with pytest.raises(RewardError, match="reward.txt is not a number"):
        parse_reward_txt(data)


@pytest.mark.parametrize("data", [b"nan", b"inf", b"-Infinity"])
def test_parse_reward_txt__not_finite(data):
    with pytest.raises(RewardError, match="not a finite number"):
        parse_reward_txt(data)


# --- fingerprint ------------------------------------------------------------------


def test_fingerprint__stable_and_shaped():
    first = fingerprint("sha256:aaa", ["reward"])
    assert first == fingerprint("sha256:aaa", ["reward"])
    assert first.startswith("sha256:") and len(first) == 71


def test_fingerprint__depends_on_tests_digest():
    assert fingerprint("sha256:aaa", ["reward"]) != fingerprint("sha256:bbb", ["reward"])


def test_fingerprint__depends_on_reward_names():
    base = fingerprint("sha256:aaa", ["reward"])
    assert base != fingerprint("sha256:aaa", ["score"])
    assert base != fingerprint("sha256:aaa", ["reward", "style"])


def test_fingerprint__order_insensitive():
    assert fingerprint("sha256:aaa", ["b", "a", "c"]) == fingerprint("sha256:aaa", ["c", "b", "a"])
    assert fingerprint("sha256:aaa", {"b": 1, "a": 0}) == fingerprint("sha256:aaa", {"a": 0, "b": 1})


def test_fingerprint__names_not_merged():
    assert fingerprint("sha256:aaa", ["ab"]) != fingerprint("sha256:aaa", ["a", "b"])
