"""Tests generated from the examples each rule carries: detection, position, fix, idempotence."""

import ast
import re

import pytest

from examples import invalid_examples, valid_examples
from flake8_tensorcopy.engine import fix_text, lint_text, select_rules
from flake8_tensorcopy.rules import Rule, all_rules, get_rule
from flake8_tensorcopy.rules.base import DOC_SECTIONS, Options


def _options(ex):
    return Options(**ex.options)


@pytest.mark.parametrize("rule,ex", invalid_examples())
def test_invalid_example_is_reported_at_its_position(rule, ex):
    # An example of a rule another covers (TNS102 under TNS101) shows it with that one off.
    rules = [r for r in all_rules() if rule.code not in r.subsumes or r.code in ex.also]
    result = lint_text(ex.code, rules, _options(ex))
    assert result.error is None
    found = [(v.code, v.line, v.col) for v in result.violations]
    assert (rule.code, ex.line, ex.col) in found, found
    allowed = {rule.code, *ex.also}
    assert {v.code for v in result.violations} <= allowed, found
    for v in result.violations:
        assert v.message and v.message[-1] not in ".;", v.message


def _template(rule) -> "re.Pattern":
    parts = re.split(r"\{\w+\}", rule.message)
    return re.compile(".*".join(re.escape(p) for p in parts), re.S)


@pytest.mark.parametrize("rule,ex", invalid_examples())
def test_messages_are_the_rule_message_templates(rule, ex):
    """One message source: what users see is the template `explain`, the docs and SARIF show."""
    for strict in (False, True):
        options = Options(**{**ex.options, "strict": strict})
        for v in lint_text(ex.code, all_rules(), options).violations:
            assert _template(get_rule(v.code)).fullmatch(v.message), (v.code, v.message)


@pytest.mark.parametrize("rule,ex", invalid_examples())
def test_invalid_example_fix(rule, ex):
    codes = select_rules([rule.code, *ex.also])
    fixed = fix_text(ex.code, codes, _options(ex), unsafe=ex.unsafe)
    assert fixed.error is None
    if ex.fixed is None:
        assert fixed.text == ex.code
        return
    assert fixed.text == ex.fixed
    compile(fixed.text, "<fixed>", "exec")
    if ex.unsafe:
        # An unsafe fix is not applied without --unsafe-fixes.
        assert fix_text(ex.code, codes, _options(ex), unsafe=False).text == ex.code
    # A second run finds nothing left to fix, and the rule no longer fires.
    again = fix_text(fixed.text, codes, _options(ex), unsafe=ex.unsafe)
    assert again.text == fixed.text
    assert not [v for v in lint_text(fixed.text, codes, _options(ex)).violations if v.code == rule.code]


@pytest.mark.parametrize("rule,ex", valid_examples())
def test_valid_example_is_clean(rule, ex):
    result = lint_text(ex.code, all_rules(), _options(ex))
    assert result.error is None
    assert [v for v in result.violations if v.code == rule.code] == []
    ast.parse(ex.code)


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_rule_metadata(rule):
    sections = rule.doc_sections()
    missing = [s for s in DOC_SECTIONS if not sections.get(s)]
    assert not missing, f"{rule.code} docs lack sections {missing}"
    assert "pytorch.org" in sections["References"]
    assert rule.code.startswith("TNS") and len(rule.code) == 6
    assert rule.name and rule.message and rule.VALID and rule.INVALID
    # The message says what to do: in its template, or in the advice it fills in per finding (each
    # invalid example's message says it).
    if "{advice}" in rule.message:
        for ex in rule.INVALID:
            for v in lint_text(ex.code, select_rules([rule.code, *ex.also]), _options(ex)).violations:
                assert v.code != rule.code or any(w in v.message for w in ("; use ", "; wrap ")), v.message
    else:
        assert "use" in rule.message or "wrap" in rule.message or "move" in rule.message
    if rule.fix_safety is not None:
        assert rule.fix_safety in ("safe", "unsafe")
        assert rule.fix_title
        assert any(ex.fixed for ex in rule.INVALID), "a fixable rule shows its fix in an example"
    else:
        assert all(ex.fixed is None for ex in rule.INVALID)


def test_codes_are_unique_and_registration_rejects_a_collision():
    codes = [r.code for r in all_rules()]
    assert len(codes) == len(set(codes))
    with pytest.raises(ValueError, match="TNS201"):
        type("Dup", (Rule,), {"code": "TNS201"})


def test_examples_are_frozen_records():
    for rule in all_rules():
        for ex in [*rule.VALID, *rule.INVALID]:
            with pytest.raises(AttributeError):
                ex.code = "changed"
            assert ex == ex.replace() and isinstance(ex.options, dict)


def test_messages_are_short():
    """About 100 characters around the expressions they quote (issue 18): what to write instead
    is the fix title's, shown by --show-fixes, the editor and `explain`."""
    from flake8_tensorcopy.rules.tns3 import _CONSEQUENCES

    for rule in all_rules():
        fixed = len(re.sub(r"\{\w+\}", "", rule.message))
        assert fixed <= 110, (rule.code, fixed)
    longest = max(len(c) for c in _CONSEQUENCES.values())
    assert len(re.sub(r"\{\w+\}", "", get_rule("TNS301").message)) + longest <= 135
