"""Every failure kind has words a person reads, next to the kind itself."""

from __future__ import annotations

import pytest

from tui.engine.startup.vocabulary import FAILURE_LABELS, FailureKind


@pytest.mark.parametrize("kind", list(FailureKind))
def test_every_failure_kind_has_a_label(kind: FailureKind) -> None:
    assert kind in FAILURE_LABELS, f"{kind!r} has no entry in FAILURE_LABELS"
    assert kind.label.strip(), f"{kind!r} has an empty label"


def test_no_two_failure_kinds_read_the_same() -> None:
    labels = [kind.label for kind in FailureKind]
    assert len(set(labels)) == len(labels)


def test_labels_are_words_not_codes() -> None:
    assert FailureKind.OOM.label == "CUDA out of memory"
    assert FailureKind.NCCL.label == "NCCL error"
    assert FailureKind.TRACEBACK_OTHER.label == "other exception"
    assert FailureKind.OOM.value == "oom"
