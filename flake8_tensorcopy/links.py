"""Where a rule's documentation lives on the web: one URL per rule, for the editor server
(`codeDescription.href`), SARIF (`helpUri`), JSON output and `tensorcopy rules`.

The scheme is the rule's heading in docs/rules.md, as GitHub anchors it:
`<base>#tns201-clone-before-detach` (`## TNS201: clone-before-detach`, lower-cased, the colon
dropped, spaces as hyphens).  The base is `TENSORCOPY_DOCS_URL` when set (a fork, a mirror, a
docs site built from docs/rules.md), else `DOCS_URL`.
"""

from __future__ import annotations

import os
import re

# The published docs/rules.md.  Change it here (one place) if the repository moves.
DOCS_URL = "https://github.com/flake8-tensorcopy/flake8-tensorcopy/blob/main/docs/rules.md"
ENV = "TENSORCOPY_DOCS_URL"


def docs_base() -> str:
    return os.environ.get(ENV, "").strip() or DOCS_URL


def anchor(code: str, name: str) -> str:
    """GitHub's anchor for the heading `## CODE: name` (lower case, punctuation other than
    hyphens and underscores dropped, spaces as hyphens)."""
    heading = f"{code}: {name}".lower()
    return re.sub(r"[^\w\- ]", "", heading).replace(" ", "-")


def rule_url(code: str, name: str | None = None) -> str:
    """The documentation of a rule; the page itself for a code without a rule (TNS000)."""
    base = docs_base()
    return f"{base}#{anchor(code, name)}" if name else base
