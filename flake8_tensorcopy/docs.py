"""Generate the rule documentation from the rule classes (the single source of truth).

    python -m flake8_tensorcopy.docs          # rewrite docs/rules.md and README's rules table
    python -m flake8_tensorcopy.docs --check  # exit 1 if they are out of date
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import textwrap

from .rules import all_rules

_TABLE = re.compile(r"(<!-- rules-table:[^\n]*-->\n)(.*?)(<!-- end rules-table -->)", re.S)


def rule_summary(rule) -> str:
    """The first sentence of a rule's "What it does" (the README's table, `tensorcopy rules`)."""
    what = rule.doc_sections().get("What it does", "").split("\n\n")[0].replace("\n", " ")
    return re.split(r"(?<=[.:])\s", what, maxsplit=1)[0].rstrip(":.")


def rules_table() -> str:
    rows = ["| Code | Name | What it finds | Fix |", "|---|---|---|---|"]
    for r in all_rules():
        fix = {"safe": "safe", "unsafe": "unsafe (`--unsafe-fixes`)", None: "-"}[r.fix_safety]
        rows.append(f"| {r.code} | {r.name} | {rule_summary(r)} | {fix} |")
    return "\n".join(rows) + "\n"


def rules_text_table(width: int = 100, style=None) -> str:
    """`tensorcopy rules`: code, name, fix safety and summary in aligned columns, the summary
    wrapped at word boundaries to `width` (on its own indented lines when the columns before it
    leave it less than 30 characters)."""
    rules = all_rules()
    head = ("Code", "Name", "Fix", "What it finds")
    rows = [(r.code, r.name, r.fix_safety or "-", rule_summary(r)) for r in rules]
    w0 = max(len(x[0]) for x in [head, *rows])
    w1 = max(len(x[1]) for x in [head, *rows])
    w2 = max(len(x[2]) for x in [head, *rows])
    indent = w0 + w1 + w2 + 6
    room = width - indent
    bold = style.bold if style is not None else (lambda s: s)
    out = []
    if room >= 30:
        out.append(bold(f"{head[0]:<{w0}}  {head[1]:<{w1}}  {head[2]:<{w2}}  {head[3]}".rstrip()))
    else:
        out.append(bold(f"{head[0]:<{w0}}  {head[1]:<{w1}}  {head[2]}".rstrip()))
    for code, name, fix, summary in rows:
        left = f"{code:<{w0}}  {name:<{w1}}  {fix:<{w2}}  "
        if room >= 30:
            lines = textwrap.wrap(summary, room, break_on_hyphens=False) or [""]
            out.append(left + lines[0])
            out.extend(" " * indent + line for line in lines[1:])
        else:
            out.append(left.rstrip())
            out.extend("    " + line for line in textwrap.wrap(summary, max(20, width - 4), break_on_hyphens=False))
    return "\n".join(out) + "\n"


def rules_markdown() -> str:
    parts = ["# Rules\n\n_Generated from the rule classes by `python -m flake8_tensorcopy.docs`._\n\n",
             rules_table(), "\n"]
    for r in all_rules():
        fix = f"{r.fix_title} ({r.fix_safety})" if r.fix_safety else "none (the message says what to change)"
        body = textwrap.dedent(r.docs).strip().replace("\n## ", "\n### ")
        if body.startswith("## "):
            body = "#" + body
        parts.append(f"## {r.code}: {r.name}\n\nMessage: `{r.message}`\n\nFix: {fix}\n\n{body}\n\n")
    return "".join(parts).rstrip() + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m flake8_tensorcopy.docs")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--root", default=os.getcwd())
    args = ap.parse_args(argv)
    readme_path = os.path.join(args.root, "README.md")
    rules_path = os.path.join(args.root, "docs", "rules.md")
    with open(readme_path, encoding="utf-8") as f:
        readme = f.read()
    new_readme = _TABLE.sub(lambda m: m.group(1) + rules_table() + m.group(3), readme)
    new_rules = rules_markdown()
    try:
        with open(rules_path, encoding="utf-8") as f:
            old_rules = f.read()
    except OSError:
        old_rules = None
    stale = [p for p, old, new in ((readme_path, readme, new_readme), (rules_path, old_rules, new_rules))
             if old != new]
    if args.check:
        for p in stale:
            print(f"{p} is out of date: run python -m flake8_tensorcopy.docs", file=sys.stderr)
        return 1 if stale else 0
    os.makedirs(os.path.dirname(rules_path), exist_ok=True)
    with open(readme_path, "w", encoding="utf-8") as f:
        f.write(new_readme)
    with open(rules_path, "w", encoding="utf-8") as f:
        f.write(new_rules)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
