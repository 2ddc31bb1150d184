"""The analysis asked directly, without a rule: what the walker knows at each `probe(...)` call."""

import ast
import textwrap

from flake8_tensorcopy.analysis.walker import Walker
from flake8_tensorcopy.model import Options
from flake8_tensorcopy.rules.base import Context
from flake8_tensorcopy.source import LineIndex


class _Probe:
    """Records (fact, no_grad) of the argument of every `probe(...)` call."""

    def __init__(self):
        self.seen = []

    def visit_Call(self, node, ctx):
        if isinstance(node.func, ast.Name) and node.func.id == "probe":
            self.seen.append((ctx.fact(node.args[0]), ctx.no_grad))


def probes(code: str) -> list:
    """(fact, grad mode off) of the argument of each `probe(...)` call of `code` (dedented), in
    the order the walker reaches them."""
    code = textwrap.dedent(code)
    ctx = Context(LineIndex(code), Options())
    probe = _Probe()
    Walker(ast.parse(code), [probe], ctx).run()
    return probe.seen


def probe(code: str):
    """The fact of the one `probe(...)` argument of `code`."""
    (fact, _), = probes(code)
    return fact
