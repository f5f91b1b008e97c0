"""The ground truth the repository carries is the shared one, byte for byte, so that a fresh clone
tests against what CI tests against."""

from __future__ import annotations

import pytest

from tests.ground_truth import REPO, packed_files, shared_files, unpacked

SHARED = REPO.parent / "shared"


@pytest.mark.skipif(not (SHARED / "conformance" / "runs").is_dir(), reason="no ../shared to compare the pack with")
def test_the_pack_holds_every_file_of_the_shared_ground_truth_unchanged():
    packed, shared = packed_files(), shared_files(SHARED)
    assert sorted(packed) == sorted(shared), "tests/data/ground_truth.tar.xz is stale: python -m tests.ground_truth"
    changed = [name for name, data in shared.items() if packed[name] != data]
    assert not changed, f"changed in ../shared since packed: {changed[:5]}"


def test_the_pack_unpacks_into_the_corpus_the_tests_read():
    root = unpacked()
    assert len(list((root / "conformance" / "runs").glob("eval_*"))) == 9
    assert (root / "conformance" / "runs" / "MANIFEST.json").is_file()
    assert (root / "external" / "tau-bench" / "historical_trajectories" / "gpt-4o-airline.json").is_file()
    assert unpacked() == root  # once: the second call finds it
