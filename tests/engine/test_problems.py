"""The errors-only filter's test for problem lines."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from tui.engine.logs.problem_lines import looks_bad

# The plain statement of the rule: a level word, a class name ending in Error, Exception or
# Warning, Traceback, or failed, each as a whole word.
_RULE = re.compile(
    r"\b(?:ERROR|CRITICAL|WARNING|\w*Error|\w*Exception|Traceback|[Ff]ailed|\w*Warning)\b"
)
_PIECES = ["Error", "ERROR", "Exception", "Warning", "WARNING", "CRITICAL", "Traceback",
           "failed", "Failed", "rror", "arning", "Runtime", "x", "é", "_", "1", " ", ":", "(",
           "[", "-", "\t", "Errors", "Tracebacks"]  # fmt: skip


@given(st.lists(st.sampled_from(_PIECES), max_size=12).map("".join))
def test_agrees_with_the_rule_on_word_soup(line: str) -> None:
    assert looks_bad(line) is (_RULE.search(line) is not None)


@given(st.text(max_size=80))
def test_agrees_with_the_rule_on_any_text(line: str) -> None:
    assert looks_bad(line) is (_RULE.search(line) is not None)


def test_examples() -> None:
    assert looks_bad("[2026-03-01 10:00:00 TP0] RuntimeError: CUDA out of memory")
    assert looks_bad("WARNING: expert weight 3 uses a fallback kernel")
    assert looks_bad("torch.distributed: failed to connect")
    assert looks_bad("UserWarning: TypedStorage is deprecated")
    assert not looks_bad("[2026-03-01 10:00:00 TP0] Load weight end. mem usage=58.42 GB")
    assert not looks_bad("ErrorsSeen=0 failedover=1 Warnings")
