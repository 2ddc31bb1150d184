"""Collect every rule's VALID/INVALID examples as pytest parameters."""

import pytest

from flake8_tensorcopy.rules import all_rules


def invalid_examples():
    return [
        pytest.param(rule, ex, id=f"{rule.code}-invalid-{i}")
        for rule in all_rules()
        for i, ex in enumerate(rule.INVALID)
    ]


def valid_examples():
    return [
        pytest.param(rule, ex, id=f"{rule.code}-valid-{i}")
        for rule in all_rules()
        for i, ex in enumerate(rule.VALID)
    ]
