"""ACTION_MATCH: the upstream ``check_if_task_success`` comparator (run-format.md §7), exactly.

The comparison is recursive over arbitrary JSON, so it runs once per scenario at ingest time and
stores its outcome as two columns: the lenient verdict and whether the top-level item counts
match after normalization. Strict matching (``--strict-match`` or ``disallow_extra_items``) is
``lenient AND counts_equal``, because the strict check only adds an up-front length test; so a
re-score can switch strict matching on or off without re-reading any run folder.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

_PUNCTUATION = re.compile(r"[^\w\s]")


class ActionMatchUndefined(ValueError):
    """The upstream comparator raises on this reference/prediction shape (it would crash the run)."""


@dataclass(frozen=True)
class TextFlags:
    ignore_capitalization: bool = False
    ignore_punctuation: bool = False
    clean_text: bool = False


@dataclass(frozen=True)
class ActionMatch:
    """Outcome of the comparator for one scenario, independent of strict matching."""

    lenient: bool
    reference_items: int
    # None when the prediction has no length (upstream would raise under strict matching).
    prediction_items: int | None
    # Evidence: per reference item (after the comparator's unwrapping), the prediction item that
    # greedy first-fit matched to it, or None; the items as compared.
    matched: tuple[int | None, ...] = ()
    references: tuple = ()
    predictions: tuple = ()

    def verdict(self, disallow_extra_items: bool) -> bool:
        if disallow_extra_items and self.reference_items != self.prediction_items:
            return False
        return self.lenient


def _is_close(ref: float, pred: float) -> bool:
    # numpy.isclose with its defaults (rtol=1e-5, atol=1e-8, equal_nan=False).
    if ref == pred:
        return True
    if math.isinf(ref) or math.isinf(pred) or math.isnan(ref) or math.isnan(pred):
        return False
    return abs(ref - pred) <= 1e-8 + 1e-5 * abs(pred)


def _prepare_text(value: str, flags: TextFlags) -> str:
    if flags.ignore_capitalization:
        value = value.lower()
    if flags.ignore_punctuation:
        value = _PUNCTUATION.sub("", value)
    if flags.clean_text and flags.ignore_capitalization:
        # NeMo's clean_label (num_to_words=False) only lower-cases in this runner version.
        value = value.lower()
    return value


def match_scalar(ref: Any, pred: Any, flags: TextFlags) -> bool:
    """``match_str_and_float``: numeric when both sides convert with ``float()``, else text."""
    if type(ref) is str and ref == pred and "n" not in ref and "N" not in ref:
        return True  # the same text matches either way, unless it is a NaN (no NaN is close to itself)
    try:
        ref = float(ref)
        pred = float(pred)
    except Exception:
        # ``ref`` may already be a float here ("1" vs "one" compares "1.0" with "one").
        return _prepare_text(str(ref), flags) == _prepare_text(str(pred), flags)
    return _is_close(ref, pred)


def match_item(ref: Any, pred: Any, flags: TextFlags) -> bool:
    if isinstance(ref, dict):
        return isinstance(pred, dict) and match_dict(ref, pred, flags)
    if isinstance(ref, list):
        return isinstance(pred, list) and match_list(ref, pred, flags)
    return match_scalar(ref, pred, flags)


def match_dict(ref: dict, pred: Any, flags: TextFlags) -> bool:
    """Every reference key present in ``pred`` with a matching value; extra keys allowed."""
    for key, ref_value in ref.items():
        if key not in pred:
            return False
        if not match_item(ref_value, pred[key], flags):
            return False
    return True


def _greedy_one_to_one(refs: list, preds: list, matches) -> bool:
    used: set[int] = set()
    for ref in refs:
        for i, pred in enumerate(preds):
            if i not in used and matches(ref, pred):
                used.add(i)
                break
        else:
            return False
    return True


def match_list(ref: list, pred: list, flags: TextFlags) -> bool:
    return _greedy_one_to_one(ref, pred, lambda r, p: match_item(r, p, flags))


def normalize_payload(payload: Any) -> Any:
    """``normalize_scenario_payload``: a list of exactly one dict is unwrapped to that dict."""
    if isinstance(payload, list) and len(payload) == 1 and isinstance(payload[0], dict):
        return payload[0]
    return payload


def compare(reference: Any, prediction: Any, flags: TextFlags) -> ActionMatch:
    """Run the comparator on parsed reference and prediction payloads."""
    try:
        ref = normalize_payload(reference)
        pred = normalize_payload(prediction)
        if isinstance(ref, dict):
            ref = [ref]
        if isinstance(pred, dict):
            pred = [pred]
        if len(ref) == 1 and len(pred) > 1:
            pred = [pred[-1]]  # "Situation 2": only the last prediction item counts
        prediction_items = len(pred) if hasattr(pred, "__len__") else None
        refs = list(ref)
    except (TypeError, AttributeError, KeyError, IndexError) as exc:
        raise _undefined(exc) from exc
    pairs, raised_at, error = _pairing(refs, pred, flags)
    unmatched = next((i for i, p in enumerate(pairs) if p is None), len(pairs))
    if error is not None and raised_at <= unmatched:  # upstream stops at the first unmatched item, or raises
        raise _undefined(error) from error
    return ActionMatch(lenient=unmatched == len(pairs), reference_items=len(refs), prediction_items=prediction_items,
                       matched=pairs, references=tuple(refs),
                       predictions=tuple(pred) if isinstance(pred, (list, tuple)) else ())


def _undefined(exc: Exception) -> ActionMatchUndefined:
    return ActionMatchUndefined(f"the upstream comparator raises {type(exc).__name__} on this payload shape: {exc}")


def _pairing(refs: list, preds: Any, flags: TextFlags) -> tuple[tuple[int | None, ...], int, Exception | None]:
    """The comparator's greedy first-fit one-to-one matching (top-level items straight to
    ``match_dict``, as upstream does), carried on past the first unmatched reference item (where
    upstream stops: its verdict is made) so that every unmatched item is named. Returns, per
    reference item, the prediction item matched to it (or None), and the first item whose search
    raised, with the exception (upstream raises it unless an earlier item went unmatched)."""
    used: set[int] = set()
    pairs: list[int | None] = []
    raised_at, error = len(refs), None
    for i, ref in enumerate(refs):
        found = None
        try:
            candidates = list(enumerate(preds))
        except TypeError as exc:  # a prediction that is no sequence
            candidates = []
            if error is None:
                raised_at, error = i, exc
        for j, pred in candidates:
            if j in used:
                continue
            try:
                hit = match_dict(ref, pred, flags)
            except (TypeError, AttributeError, KeyError, IndexError) as exc:
                if error is None:
                    raised_at, error = i, exc
                continue
            if hit:
                found = j
                used.add(j)
                break
        pairs.append(found)
    return tuple(pairs), raised_at, error


@dataclass(frozen=True)
class Difference:
    """Where a prediction item falls short of a reference item, by the comparator's rules."""

    path: str  # the key path into the reference item: "resolution_details", "items[0].qty"
    kind: str  # missing key | other value | other type | no element left
    expected: Any
    actual: Any = None


def differences(reference: Any, prediction: Any, flags: TextFlags, path: str = "") -> list[Difference]:
    """Every place ``prediction`` does not match ``reference`` as ``match_item`` compares them (extra
    keys in the prediction are allowed, list elements are paired greedily first-fit, each unmatched
    one against the closest element left)."""
    if isinstance(reference, dict):
        if not isinstance(prediction, dict):
            return [Difference(path or "(item)", "other type", reference, prediction)]
        found = []
        for key, value in reference.items():
            where = f"{path}.{key}" if path else str(key)
            if key not in prediction:
                found.append(Difference(where, "missing key", value))
            elif not match_item(value, prediction[key], flags):
                found += differences(value, prediction[key], flags, where)
        return found
    if isinstance(reference, list):
        if not isinstance(prediction, list):
            return [Difference(path or "(item)", "other type", reference, prediction)]
        used: set[int] = set()
        found = []
        for i, element in enumerate(reference):
            hit = next((j for j, p in enumerate(prediction) if j not in used and match_item(element, p, flags)), None)
            if hit is not None:
                used.add(hit)
                continue
            left = [j for j in range(len(prediction)) if j not in used]
            if not left:
                found.append(Difference(f"{path}[{i}]", "no element left", element))
                continue
            closest = min(left, key=lambda j: len(differences(element, prediction[j], flags)))
            found += differences(element, prediction[closest], flags, f"{path}[{i}]")
        return found
    return [] if match_scalar(reference, prediction, flags) else [Difference(path or "(item)", "other value",
                                                                               reference, prediction)]


@dataclass(frozen=True)
class ItemComparison:
    """One reference item against the prediction item matched to it, or else the closest one."""

    ordinal: int  # 1-based, the reference item's
    reference: Any
    prediction: Any  # None: no prediction item at all
    prediction_ordinal: int | None
    matched: bool
    differences: tuple[Difference, ...] = ()


def item_comparisons(reference: Any, prediction: Any, flags: TextFlags) -> tuple[list[ItemComparison], list[tuple[int, Any]]]:
    """ACTION_MATCH item by item, as the comparator saw the items (unwrapped, the last prediction
    item alone against a single reference item): each reference item with its matched prediction
    item, or the closest unmatched one and what differs; and the other prediction items no reference
    item took (ordinal, item), which fail the scenario under strict matching."""
    outcome = compare(reference, prediction, flags)
    predictions = list(outcome.predictions)
    taken = {j for j in outcome.matched if j is not None}
    items = []
    for i, (ref, matched) in enumerate(zip(outcome.references, outcome.matched), start=1):
        if matched is not None:
            items.append(ItemComparison(i, ref, predictions[matched], matched + 1, True))
            continue
        left = [j for j in range(len(predictions)) if j not in taken] or list(range(len(predictions)))
        if not left:
            items.append(ItemComparison(i, ref, None, None, False))
            continue
        closest = min(left, key=lambda j: len(differences(ref, predictions[j], flags)))
        items.append(ItemComparison(i, ref, predictions[closest], closest + 1, False,
                                    tuple(differences(ref, predictions[closest], flags))))
    shown = taken | {c.prediction_ordinal - 1 for c in items if c.prediction_ordinal is not None}
    extra = [(j + 1, p) for j, p in enumerate(predictions) if j not in shown]
    return items, extra
