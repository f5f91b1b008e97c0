"""ACTION_MATCH rules of check_if_task_success (run-format.md §7), one test per rule."""

import pytest

from scorelake.transforms.scoring import ActionMatchUndefined, TextFlags, compare, match_scalar

PLAIN = TextFlags()
LOOSE = TextFlags(ignore_capitalization=True, ignore_punctuation=True, clean_text=True)


def verdict(ref, pred, flags=PLAIN, strict=False):
    return compare(ref, pred, flags).verdict(strict)


def test_list_of_one_dict_is_unwrapped_on_both_sides():
    assert verdict([{"a": 1}], {"a": 1})
    assert verdict({"a": 1}, [{"a": 1}])


def test_only_last_prediction_counts_when_reference_has_one_item():
    assert verdict({"a": 1}, [{"a": 1}, {"a": 2}]) is False
    assert verdict({"a": 2}, [{"a": 1}, {"a": 2}]) is True


def test_last_item_rule_runs_before_strict_so_extras_are_not_penalised():
    assert verdict({"a": 2}, [{"a": 1}, {"a": 2}], strict=True) is True


def test_strict_fails_on_count_mismatch_and_lenient_tolerates_extras():
    ref, pred = [{"a": 1}, {"b": 2}], [{"a": 1}, {"b": 2}, {"c": 3}]
    assert verdict(ref, pred) is True
    assert verdict(ref, pred, strict=True) is False


def test_greedy_first_fit_without_backtracking():
    # The first ref item grabs pred[0]; the second then finds nothing, although a matching exists.
    ref = [{"a": 1}, {"a": 1, "b": 2}]
    pred = [{"a": 1, "b": 2}, {"a": 1}]
    assert verdict(ref, pred) is False
    assert verdict(list(reversed(ref)), pred) is True


def test_each_prediction_matches_at_most_once():
    assert verdict([{"a": 1}, {"a": 1}], [{"a": 1}, {"b": 1}]) is False


def test_empty_reference_list_matches_unless_strict_with_extras():
    assert verdict({"actions": []}, {"actions": [{"x": 1}]}) is True
    assert verdict([], [{"x": 1}, {"y": 1}]) is True
    assert verdict([], [{"x": 1}, {"y": 1}], strict=True) is False
    assert verdict([], [], strict=True) is True


def test_extra_keys_in_prediction_are_allowed_at_every_level():
    assert verdict({"a": {"b": 1}}, {"a": {"b": 1, "c": 2}, "d": 3})


def test_missing_key_fails():
    assert verdict({"a": 1, "b": 2}, {"a": 1}) is False


def test_nested_lists_are_order_independent_and_ignore_strict():
    assert verdict({"l": [1, 2]}, {"l": [2, 3, 1]}, strict=True) is True
    assert verdict({"l": [1, 1]}, {"l": [1, 2]}) is False


def test_type_mismatch_for_dict_and_list_values():
    assert verdict({"a": {"b": 1}}, {"a": [1]}) is False
    assert verdict({"a": [1]}, {"a": "1"}) is False


def test_float_or_string_comparison():
    assert match_scalar("6.49", 6.49, PLAIN)
    assert match_scalar("1", 1.0, PLAIN)
    assert match_scalar(True, "1", PLAIN)  # float(True) == 1.0
    assert match_scalar(100000.0, 100000.5, PLAIN)  # within rtol=1e-5
    assert not match_scalar(1.0, 1.001, PLAIN)
    assert not match_scalar("nan", "nan", PLAIN)
    for nan in (" NaN ", "+nan", "-NAN\n"):  # the same text, but a NaN: never close to itself
        assert not match_scalar(nan, nan, LOOSE)
    for same in ("Refund issued", "TC-55678", " 12 ", "1e3", "Infinity", ""):
        assert match_scalar(same, same, PLAIN) and match_scalar(same, same, LOOSE)
    assert match_scalar("inf", float("inf"), PLAIN)


def test_converted_reference_is_compared_as_its_float_text():
    # ref converts to 1.0, pred fails: "1.0" vs "one"; and True becomes "1.0" vs "true".
    assert not match_scalar("1", "one", LOOSE)
    assert not match_scalar(True, "true", LOOSE)
    assert match_scalar("1", "1.0", PLAIN)


def test_none_is_the_text_none():
    assert match_scalar(None, "None", PLAIN)
    assert match_scalar(None, None, TextFlags(ignore_capitalization=True))


def test_text_flags():
    assert not match_scalar("Refund", "refund", PLAIN)
    assert match_scalar("Refund", "refund", TextFlags(ignore_capitalization=True))
    assert match_scalar("it's done.", "its done", TextFlags(ignore_punctuation=True))
    assert match_scalar("a_b", "a_b!", TextFlags(ignore_punctuation=True))  # \w keeps "_"
    assert not match_scalar("a  b", "a b", LOOSE)  # whitespace is never collapsed
    assert not match_scalar(" a", "a", LOOSE)  # nor stripped
    # clean_text only lower-cases, and only together with ignore_capitalization
    assert not match_scalar("A", "a", TextFlags(clean_text=True))


def test_shapes_that_crash_upstream_are_reported():
    with pytest.raises(ActionMatchUndefined):
        compare("text", [{"a": 1}], PLAIN)
    with pytest.raises(ActionMatchUndefined):
        compare({"a": 1}, ["a"], PLAIN)  # "a" in "a" holds, then "a"["a"] raises
    with pytest.raises(ActionMatchUndefined):
        compare(None, [], PLAIN)


def test_prediction_without_length_is_only_a_problem_when_it_is_compared():
    result = compare([], None, PLAIN)
    assert result.verdict(False) is True
    assert result.verdict(True) is False
