"""Environment variables are read in one place (memstream.models.env): any text set in one is a value or one
line naming the variable, never a traceback; digits of other scripts ("٣", "²") are refused, not half-read."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstream.errors import MemstreamError
from memstream.models.bounds import answer_tokens
from memstream.models.embedders import MiniLMEmbedder
from memstream.models.endpoint import attempts_setting, breaker_setting
from memstream.models.env import setting

READERS = {
    "MEMSTREAM_ATTEMPTS": attempts_setting,
    "MEMSTREAM_BREAKER": breaker_setting,
    "MEMSTREAM_TIMEOUT": lambda: setting(None, "MEMSTREAM_TIMEOUT", 60.0, "the timeout in seconds"),
    "MEMSTREAM_THREADS": lambda: MiniLMEmbedder().threads,
    "MEMSTREAM_MAX_TOKENS": lambda: answer_tokens("importance"),
}


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(READERS)), st.text(max_size=12).filter(lambda t: "\x00" not in t))
def test_any_value_of_a_variable_is_a_value_or_one_line(variable: str, raw: str) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(variable, raw)
        try:
            READERS[variable]()
        except MemstreamError as e:
            assert variable in str(e) or "must be" in str(e)


@pytest.mark.parametrize("variable", sorted(READERS))
@pytest.mark.parametrize("raw", ["٣", "²", "３", "1²"])
def test_digits_of_other_scripts_are_refused_naming_the_variable(monkeypatch, variable: str, raw: str) -> None:
    monkeypatch.setenv(variable, raw)
    with pytest.raises(MemstreamError, match=variable):
        READERS[variable]()


def test_ascii_values_are_read_as_before(monkeypatch) -> None:
    monkeypatch.setenv("MEMSTREAM_ATTEMPTS", " 4 ")
    monkeypatch.setenv("MEMSTREAM_TIMEOUT", "2.5")
    monkeypatch.setenv("MEMSTREAM_THREADS", "2")
    assert attempts_setting() == 4 and READERS["MEMSTREAM_TIMEOUT"]() == 2.5 and MiniLMEmbedder().threads == 2
