"""The rule docs in README.md and docs/rules.md are generated from the rule classes."""

import subprocess
import sys

from conftest import ROOT


def test_generated_rule_docs_are_up_to_date():
    proc = subprocess.run([sys.executable, "-m", "flake8_tensorcopy.docs", "--check", "--root", ROOT],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_readme_names_the_test_command_ci_runs():
    with open(f"{ROOT}/README.md", encoding="utf-8") as f:
        readme = f.read()
    with open(f"{ROOT}/.ci/run", encoding="utf-8") as f:
        ci = f.read()
    assert "python -m pytest -q" in readme and "\npython -m pytest -q\n" in ci
