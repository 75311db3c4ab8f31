"""Model identity: family, version date and effort parsed from every source's spelling."""

from __future__ import annotations

import pytest

from benchpress.validate.model_identity import ModelIdentity, effort_from_setting, parse_model


@pytest.mark.parametrize("raw, family, version_date, effort", [
    # Epoch AI: date and effort suffixes, thinking budgets in K
    ("o3-2025-04-16_high", "o3", "2025-04-16", "high"),
    ("o3-2025-04-16_low", "o3", "2025-04-16", "low"),
    ("claude-3-7-sonnet-20250219_64K", "claude-3.7-sonnet", "2025-02-19", "thinking-64k"),
    ("claude-sonnet-4-5-20250929", "claude-sonnet-4.5", "2025-09-29", None),
    ("gpt-oss-120b_high", "gpt-oss-120b", None, "high"),
    ("mistral-large-2411", "mistral-large", "2024-11", None),
    ("qwen3-max-2025-09-23", "qwen3-max", "2025-09-23", None),
    # Aider: free text with efforts and budgets in brackets
    ("o3-mini (high)", "o3-mini", None, "high"),
    ("claude-3-7-sonnet-20250219 (32k thinking tokens)", "claude-3.7-sonnet", "2025-02-19", "thinking-32k"),
    ("gemini-2.5-flash-preview-05-20 (no think)", "gemini-2.5-flash-preview", "--05-20", "no-thinking"),
    ("DeepSeek R1 (0528)", "deepseek-r1", "--05-28", None),
    ("o1-2024-12-17 (high)", "o1", "2024-12-17", "high"),
    # LiveBench: Claude's other word order, effort words, thinking budgets, release tags
    ("claude-4-1-opus-20250805-thinking-32k", "claude-opus-4.1", "2025-08-05", "thinking-32k"),
    ("claude-4-1-opus-20250805-base", "claude-opus-4.1", "2025-08-05", "no-thinking"),
    ("claude-opus-4-5-20251101-thinking-64k-high-effort", "claude-opus-4.5", "2025-11-01", "high+thinking-64k"),
    ("gpt-5.1-2025-11-13-nothinking", "gpt-5.1", "2025-11-13", "no-thinking"),
    ("gemini-3-pro-preview-11-2025-high", "gemini-3-pro-preview", "2025-11", "high"),
    ("qwen3-235b-a22b-thinking-2507", "qwen3-235b-a22b", "2025-07", "thinking"),
    ("gpt-5-mini-default-effort", "gpt-5-mini", None, "default"),
    ("gpt-5.1-codex-max", "gpt-5.1-codex-max", None, None),  # "max" here names the model
    # the vendor matrices' own ids
    ("o3-high", "o3", None, "high"),
    ("claude-sonnet-4.5", "claude-sonnet-4.5", None, None),
    ("gpt-4o-0513", "gpt-4o", "--05-13", None),
    ("anthropic/claude-opus-4-1", "claude-opus-4.1", None, None),
])
def test_parse_model_splits_family_date_and_effort(raw, family, version_date, effort):
    assert parse_model(raw) == ModelIdentity(family, version_date, effort)


def test_efforts_of_one_model_share_family_and_date_but_stay_apart():
    low, high = parse_model("o4-mini-2025-04-16_low"), parse_model("o4-mini-2025-04-16_high")
    assert (low.family, low.version_date) == (high.family, high.version_date)
    assert (low.effort, high.effort) == ("low", "high")


def test_every_source_spelling_of_one_setting_parses_alike():
    spellings = ["claude-3-7-sonnet-20250219_32K",                     # Epoch AI
                 "claude-3-7-sonnet-20250219 (32k thinking tokens)",   # Aider
                 "claude-3-7-sonnet-20250219-thinking-32k"]            # LiveBench style
    assert len({parse_model(s) for s in spellings}) == 1


@pytest.mark.parametrize("raw", [None, "", "   "])
def test_empty_names_have_no_identity(raw):
    assert parse_model(raw) == ModelIdentity(None)


@pytest.mark.parametrize("setting, effort", [
    ('{"effort": "high (default)", "mode": "thinking"}', "high"),
    ('{"effort": "xhigh"}', "xhigh"),
    ('{"effort": "max (98304 generation tokens)"}', "max"),
    ('{"effort": "n/a"}', None),
    ('{"effort": "128K thinking budget"}', None),
    ("not json", None),
    (None, None),
])
def test_effort_from_a_sources_setting(setting, effort):
    assert effort_from_setting(setting) == effort
