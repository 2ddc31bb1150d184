"""Lazily parsed function bodies (analysis/lazytree.py): the tree is ast.parse's, node for node
and position for position, once read; bodies are parsed only when read; and the analysis finds
the same on a lazy tree as on a plain one."""

import ast
import glob
import os
import textwrap

import pytest

from conftest import FIXTURES
from examples import invalid_examples, valid_examples
from flake8_tensorcopy.analysis import lazytree
from flake8_tensorcopy.engine import lint_text


@pytest.fixture
def eager_threshold(monkeypatch):
    """Layout every file, however small (the threshold keeps tiny files to a plain parse)."""
    monkeypatch.setattr(lazytree, "_MIN_CHARS", 0)


def dump(tree):
    return ast.dump(tree, include_attributes=True)


def unread_functions(tree):
    return [f.name for f in lazytree._walk_unread(tree)]


SOURCES = {
    "methods": '''
        import torch


        class Net(torch.nn.Module):
            """A net."""

            def __init__(self, n: int = 3) -> None:
                super().__init__()
                self.fc = torch.nn.Linear(n, n)  # a layer

            @torch.no_grad()
            def predict(self, x):
                return self.fc(x).numpy()

            async def later(self, x):
                await x


        def train(model, x):
            # a comment first
            out = model(x)
            return out ;
        x = 1
    ''',
    "class ends with its last method": '''
        class A:
            def f(self):
                if self:
                    return 1
                else:
                    return 2
        if True:
            def g():
                try:
                    pass
                finally:
                    return 3
        else:
            def h(): return 4
    ''',
    "docstring with a def at a line start": '''
        def f():
            """Example:

                def forward(self, x):
                    return x
            """
            return 1


        s = """
        def not_a_function():
            pass
        """


        def g():
            return 2
    ''',
    "strings and comments in headers and last lines": '''
        def f(a="(", b=')', *, c: "Tensor" = None, **kw) -> "dict[str, int]":  # (
            return {"#": a}  # ]


        def g(
            x,  # a comment with a quote '
            y=[1, 2],
        ):
            s = "a # b"
            return s   # trailing


        def h():
            return 'x"y'  ;  # c
    ''',
    "a body whose last line ends a multi-line string": '''
        def f():
            return """
        unindented text
        """


        def g():
            x = textwrap.dedent("""
        def inner():
            pass
        """)
            return x
    ''',
    "backslash continuations": '''
        def f(x):
            y = x + \\
                1
            return y


        def g(x):
            return x + \\
        1
    ''',
    "nested functions and classes": '''
        def outer():
            def inner():
                return 1

            class Local:
                def m(self):
                    return inner()
            return Local


        class Outer:
            class Inner:
                def m(self):
                    return 1

            def n(self):
                def helper():
                    return 2
                return helper
    ''',
    "non-ascii last lines": '''
        def f():
            return "é"  # ü


        def g():
            return "日本"
    ''',
    "comments at a lower indentation inside a body": '''
        class A:
            def f(self):
                x = 1
        # a comment at column 0
                return x

            def g(self):
                return 2
        # trailing comment
    ''',
    "one-line bodies and headers over lines": '''
        def f(): return 1
        def g(a,
              b):
            return a
        async def h(
        ):
            pass
        def k() -> int: ...
    ''',
    "tabs": "class A:\n    def f(self):\n        if x:\n\t        y = 1\n        return 2\n\n"
            "    def g(self):\n        \"\"\"Doc\n\t\ttabbed line\n        \"\"\"\n        return 3\n\n"
            "class B:\n\tdef h(self):\n\t\treturn 4\n\n\ndef k():\n\treturn 5\n",
    "parenthesised and brackets over lines": '''
        def f(x):
            return torch.cat(
                [x,
                 x],
            )


        def g(x):
            return (x
        )
    ''',
}
# Small bodies far down a file (more lines above them than four times their characters): each
# is parsed where it is and moved to its line, not after as many blank lines.
SOURCES["small bodies far down"] = "import torch\n" + "x = 1\n" * 1000 + textwrap.dedent('''
    def f(x):
        return x.numpy()

    class M(torch.nn.Module):
        def forward(self, x):
            global y
            return [x[0], *x[1:]] if x else {"a": lambda: x}
''')


def test_small_bodies_far_down_are_not_parsed_after_blank_lines(eager_threshold, monkeypatch):
    source = SOURCES["small bodies far down"]
    parsed = []
    monkeypatch.setattr(lazytree, "_quiet_parse", lambda text: parsed.append(text) or ast.parse(text))
    tree = lazytree.parse(source)
    lazytree.read_all(tree)
    assert len(parsed) == 3 and all(len(text) < 200 for text in parsed[1:])
    assert dump(tree) == dump(ast.parse(source))


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_a_read_lazy_tree_is_the_parsers_tree(eager_threshold, name):
    source = textwrap.dedent(SOURCES[name]).lstrip("\n")
    tree = lazytree.parse(source)
    lazytree.read_all(tree)
    assert dump(tree) == dump(ast.parse(source))


def test_bodies_are_parsed_when_first_read(eager_threshold):
    source = textwrap.dedent(SOURCES["methods"]).lstrip("\n")
    tree = lazytree.parse(source)
    assert sorted(unread_functions(tree)) == ["__init__", "later", "predict", "train"]
    train = tree.body[-2]
    assert train.name == "train" and lazytree.unread(train.body)
    # Without reading it: where it ends and where its first statement is.
    whole = ast.parse(source).body[-2]
    assert (train.end_lineno, train.end_col_offset) == (whole.end_lineno, whole.end_col_offset)
    assert lazytree.first_body_line(train) == whole.body[0].lineno > train.lineno + 1  # (a comment first)
    assert lazytree.unread(train.body)
    assert dump(train.body[0]) == dump(whole.body[0])
    assert not lazytree.unread(train.body)
    assert sorted(unread_functions(tree)) == ["__init__", "later", "predict"]
    # The class ends where its last method does, not at the placeholder.
    net = tree.body[1]
    full = ast.parse(source).body[1]
    assert (net.end_lineno, net.end_col_offset) == (full.end_lineno, full.end_col_offset)


def test_what_the_layout_is_not_sure_of_is_parsed_whole(eager_threshold):
    # A one-line body, a header with a triple-quoted string: no placeholder for them.
    for source in ("def f(): return 1\n", 'def f(x="""a"""):\n    return x\n'):
        tree = lazytree.parse(source)
        assert unread_functions(tree) == []
        assert dump(tree) == dump(ast.parse(source))
    # Tabs: a line that starts with one is in the body (deeper, or in a string); a `def` indented
    # with one is left to the parser.
    tree = lazytree.parse(SOURCES["tabs"])
    assert sorted(unread_functions(tree)) == ["f", "g", "k"]
    lazytree.read_all(tree)
    assert dump(tree) == dump(ast.parse(SOURCES["tabs"]))
    # A docstring's `def` at a line start is not taken for a function: the real ones still are.
    tree = lazytree.parse(textwrap.dedent(SOURCES["docstring with a def at a line start"]).lstrip("\n"))
    assert sorted(unread_functions(tree)) == ["f", "g"]


@pytest.mark.parametrize("source", ["def f(:\n    pass\n", "x = 1\n  y = 2\n", "class A:\ndef f():\n    pass\n"])
def test_a_file_that_does_not_parse_outside_bodies_raises_the_parsers_error(eager_threshold, source):
    with pytest.raises(SyntaxError) as plain:
        ast.parse(source)
    with pytest.raises(SyntaxError) as lazy:
        lazytree.parse(source)
    assert (lazy.value.msg, lazy.value.lineno, lazy.value.offset) == (plain.value.msg, plain.value.lineno,
                                                                      plain.value.offset)


def test_a_body_that_does_not_parse_shows_when_read(eager_threshold):
    """The skeleton has no body to get wrong: the error shows when the body is read, as a wrong
    layout does (Reparse, once), and then it reads as returning what nothing says."""
    source = "def f():\n    return (\n\n\ndef g():\n    return 1\n"
    tree = lazytree.parse(source)
    f, g = tree.body
    assert unread_functions(tree) == ["g", "f"]
    with pytest.raises(lazytree.Reparse):
        f.body[0]
    assert [type(s) for s in f.body] == [ast.Return] and f.body[0].value.id == " unparsed"
    assert isinstance(g.body[0], ast.Return) and g.body[0].value.value == 1
    # Such a tree is not the file's: it is not handed on for checking the file.
    with pytest.raises(lazytree.Reparse):
        lazytree.read_unread(tree)


def test_a_body_that_disagrees_with_the_skeleton_comes_from_the_whole_parse(eager_threshold):
    source = textwrap.dedent(SOURCES["methods"]).lstrip("\n")
    tree = lazytree.parse(source)
    train = tree.body[-2]
    origin = train.body._src[0]
    node = lazytree._from_whole(origin, train)
    assert node is not train and origin.full is not None and not origin.broken
    assert dump(node) == dump(ast.parse(source).body[-2])
    # A function the whole parse does not end where the skeleton said: the skeleton was wrong.
    train.end_lineno += 1
    with pytest.raises(lazytree.Reparse):
        lazytree._from_whole(origin, train)
    assert origin.broken
    # Once per file: later reads take what the whole parse has there.
    assert lazytree._from_whole(origin, train).name == "train"


# ---------------------------------------------------------------- where the analysis uses it

def _project_findings(monkeypatch, files, lazy: bool, tmp_path, name):
    from test_project import _lint, make
    from flake8_tensorcopy.analysis.project import Project

    root = tmp_path / name
    root.mkdir()
    train = make(root, files=files, package="pkg")
    if lazy:
        monkeypatch.setattr(lazytree, "_MIN_CHARS", 0)
    else:
        monkeypatch.setattr(lazytree, "parse", lambda text, found=None: lazytree._quiet_parse(text))
    project = Project(str(root), batch=True)
    found = _lint(train, project)
    monkeypatch.undo()
    return found, project


@pytest.mark.parametrize("scenario", ["FILES", "CROSSING", "PER_CALL", "GENERATORS", "CONSTRUCTORS"])
def test_project_modules_summarised_from_lazy_trees_give_what_plain_trees_give(monkeypatch, tmp_path, scenario):
    import test_project

    files = getattr(test_project, scenario)
    lazy, project = _project_findings(monkeypatch, files, True, tmp_path, "lazy")
    plain, _ = _project_findings(monkeypatch, files, False, tmp_path, "plain")
    assert lazy == plain and lazy
    # The summarised modules were parsed lazily (their bodies read as the analysis asked).
    assert any(hasattr(s._walker.tree, "_lazy_origin") for s in project._summaries.values()
               if s is not None and getattr(s, "_walker", None) is not None)


def test_a_wrong_layout_in_a_project_module_analyses_the_file_again(monkeypatch, tmp_path):
    """A body read from a project module's tree shows its layout was wrong (lazytree.Reparse):
    the file is analysed again, and that tree reads its bodies from the whole parse."""
    import test_project

    plain, _ = _project_findings(monkeypatch, test_project.FILES, False, tmp_path, "plain")
    raised = []
    real = lazytree.LazyBody._load

    def load(self):
        if not raised:
            raised.append(True)
            self._src[0].broken = True
            raise lazytree.Reparse()
        return real(self)

    monkeypatch.setattr(lazytree.LazyBody, "_load", load)
    lazy, _ = _project_findings(monkeypatch, test_project.FILES, True, tmp_path, "lazy")
    assert raised == [True]
    assert lazy == plain


def test_a_checked_file_reports_the_error_of_a_body_its_analysis_reads(monkeypatch, tmp_path):
    """A syntax error in a body that a rule looks at is the file's error, also when its tree was
    parsed lazily for another file's summary."""
    from test_project import _lint
    from flake8_tensorcopy.analysis.project import Project

    monkeypatch.setattr(lazytree, "_MIN_CHARS", 0)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    helpers = pkg / "helpers.py"
    helpers.write_text("import torch\n\n\ndef make():\n    return torch.nn.Linear(2, 2)\n\n\n"
                       "def broken(x):\n    with torch.no_grad():\n    return x.numpy()\n")
    main = pkg / "main.py"
    main.write_text("import torch\nfrom .helpers import make\n\nout = make()(torch.ones(2)).numpy()\n")
    other = pkg / "other.py"
    other.write_text("import torch\nfrom .helpers import broken\n\nout = broken(torch.ones(2)).numpy()\n")
    project = Project(str(tmp_path), batch=True)
    assert [code for code, _, _ in _lint(main, project)] == ["TNS101"]  # helpers summarised, lazily
    # A file whose analysis reads the body that does not parse: analysed again, and then that
    # function returns what nothing says (no finding without --strict).
    assert _lint(other, project) == []
    project.begin()
    result = lint_text(helpers.read_text(), project=project, path=str(helpers))
    assert result.error is not None and "expected an indented block" in result.error


# ---------------------------------------------------------------- what skips unread bodies

CHECKED = sorted(glob.glob(os.path.join(FIXTURES, "TNS*.py")) + glob.glob(os.path.join(FIXTURES, "fix", "TNS*.in.py")))

NO_GRAD_SHAPES = [
    SOURCES["methods"],
    '''
    import torch
    from torch import no_grad as ng

    def evaluate(model, x):
        return helper(model(x))

    def helper(out):
        return inner(out)

    def inner(out):
        return out.numpy()

    def other(x):
        return inner(x)

    with ng():
        evaluate(None, None)

    def run():
        with torch.no_grad():
            other(1)
    ''',
    '''
    import torch

    def outer():
        def nested_helper(x):
            return x.numpy()
        return nested_helper

    def caller(x):
        with torch.inference_mode():
            return nested_helper(x)

    @torch.no_grad()
    def decorated(x):
        return only_here(x)

    def only_here(x):
        return x

    def passed(x):
        return x

    def uses(x):
        with torch.no_grad():
            passed(x)
        return map(passed, [x])
    ''',
]


def _sources():
    for src in NO_GRAD_SHAPES + list(SOURCES.values()):
        yield textwrap.dedent(src).lstrip("\n")
    for path in CHECKED:
        with open(path, encoding="utf-8") as f:
            yield f.read()
    for param in [*invalid_examples(), *valid_examples()]:
        yield param.values[1].code


def test_no_grad_callees_skipping_bodies_finds_what_a_full_scan_finds(monkeypatch):
    from flake8_tensorcopy.analysis.gradmode import no_grad_callees
    from flake8_tensorcopy.source import LineIndex

    monkeypatch.setattr(lazytree, "_MIN_CHARS", 0)
    nonempty = 0
    for text in _sources():
        try:
            full = no_grad_callees(ast.parse(text))
        except SyntaxError:
            continue
        assert no_grad_callees(ast.parse(text), LineIndex(text)) == full, text
        lazy = lazytree.parse(text)
        assert no_grad_callees(lazy, LineIndex(text)) == full, text
        nonempty += bool(full)
    assert nonempty >= 5


METHODS_THAT_SET = [
    "def f(self):\n    self.x = 1\n",
    "def f(self):\n    self.x: int = 1\n",
    "def f(self):\n    self.x: int\n",
    "def f(self):\n    if c: self.x: int = 1\n",
    "def f(self):\n    self.x += 1\n",
    "def f(self):\n    self.x[0] = 1\n",
    "def f(self):\n    self.x.y = 1\n",
    "def f(self):\n    a = self.x = 1\n",
    "def f(self):\n    (self.x) = 1\n",
    "def f(self):\n    (self\n     .x) = 1\n",
    "def f(self):\n    ( self . x  # c\n    ) = 1\n",
    "def f(me):\n    me.x //= 2\n",
    "def f(self):\n    self.losses.append(loss)\n",
    "def f(self):\n    self.losses . extend ( loss )\n",
    "def f(self):\n    self.register_buffer('w', t)\n",
    "def __init__(self, m):\n    super().__init__(m)\n",
]

METHODS_THAT_DO_NOT = [
    "def f(self):\n    if self.training:\n        return self.fc(x, dim=1)\n",
    "def f(self):\n    y = self.fc(x)\n    return y == self.x\n",
    "def f(self):\n    myself.x = 1\n    other.self.x = 2\n",
    "def f(self):\n    return {self.key: 1}\n",
]


def test_the_attribute_text_test_says_yes_to_the_targets_of_a_tuple():
    from flake8_tensorcopy.analysis.walker import may_set_attributes

    for source in ("def f(self, g, d):\n    self.g, self.d = g, d\n",
                   "def f(self, g, d):\n    self.g, self.d, n = g, d, 1\n",
                   "def f(self, p):\n    (self.a, self.b) = p\n",
                   "def f(self, p):\n    a, self.b, c = p\n",
                   "def f(self, p):\n    self.a, *self.rest = p\n"):
        assert may_set_attributes(source, "self"), source
    for source in ("def f(self, x):\n    return g(self.a, dim=1)\n",
                   "def f(self, x):\n    y = g(self.a, x)\n",
                   "def f(self, x):\n    if self.a, x == 1:\n        pass\n"):
        assert not may_set_attributes(source, "self"), source


def test_the_attribute_text_test_says_yes_to_every_way_of_setting_one():
    from flake8_tensorcopy.analysis.walker import _attributes_set_by, may_set_attributes

    for source in METHODS_THAT_SET:
        assert may_set_attributes(source, ast.parse(source).body[0].args.args[0].arg), source
    for source in METHODS_THAT_DO_NOT:
        assert not may_set_attributes(source, "self"), source
    # Whatever a method of the fixtures and examples sets, the test says yes to it.
    checked = 0
    for node, source in _methods():
        if _attributes_set_by(node):
            checked += 1
            assert may_set_attributes(source, node.args.args[0].arg), source
    assert checked > 20


def _methods():
    """(def, its source) of each function of the fixtures and examples that has a first
    positional parameter."""
    for text in _sources():
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        lines = text.splitlines(keepends=True)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.args.args:
                yield node, "".join(lines[node.lineno - 1:node.end_lineno])


# What sets an attribute of the first parameter itself, all that the class attribute facts
# read (walker._class_attr_facts), and what only changes one or reads it.
METHODS_THAT_SET_ONE = [
    "def f(self):\n    self.x = 1\n",
    "def f(self):\n    self.x: int = 1\n",
    "def f(self):\n    a = self.x = 1\n",
    "def f(self):\n    ( self . x  # c\n    ) = 1\n",
    "def f(self, p):\n    a, self.b, c = p\n",
    "def f(self):\n    self.losses.append(loss)\n",
    "def f(self):\n    self.register_buffer('w', t)\n",
    "def f(self):\n    setattr(self, 'w', t)\n",
    "def __init__(self, m):\n    super().__init__(m)\n",
]

METHODS_THAT_CHANGE_ONE = [
    "def f(self):\n    self.x += 1\n",
    "def f(self):\n    self.x[0] = 1\n",
    "def f(self, k, v):\n    self.cache[k] = v\n",
    "def f(self):\n    self.x.y = 1\n",
    "def f(self):\n    self.x.y.append(1)\n",
    "def forward(self, x):\n    return super().forward(x)\n",
]


def _sets_one(method) -> bool:
    """Whether `method` sets an attribute of its first parameter as the class attribute facts
    read one: an assignment to `me.x` (a tuple target too), `me.x.append(...)`, a call that sets
    one by its name, `super().__init__(...)` in a constructor."""
    from flake8_tensorcopy.analysis import walker

    me = method.args.args[0].arg
    for node in walker._statements_and_calls(method.body):
        if isinstance(node, ast.Call):
            func = node.func
            if walker._named_attribute(node, me) is not None:
                return True
            if method.name == "__init__" and walker._is_super_init(node):
                return True
            if isinstance(func, ast.Attribute) and func.attr in ("append", "extend", "insert") and \
                    isinstance(func.value, ast.Attribute) and isinstance(func.value.value, ast.Name) and \
                    func.value.value.id == me:
                return True
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) and node.value is not None else []
        for t, _ in walker._target_values(targets, None):
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == me:
                return True
    return False


def test_the_direct_attribute_text_test_says_yes_to_what_sets_one_and_no_to_what_changes_one():
    from flake8_tensorcopy.analysis.walker import may_set_attributes

    def direct(source, method=None):
        method = method or ast.parse(source).body[0]
        return may_set_attributes(source, method.args.args[0].arg, direct=True, init=method.name == "__init__")

    for source in METHODS_THAT_SET_ONE:
        assert _sets_one(ast.parse(source).body[0]) and direct(source), source
    for source in METHODS_THAT_CHANGE_ONE:
        # (The plain test says yes to them: _attributes_set_by reads these.)
        assert not _sets_one(ast.parse(source).body[0]) and not direct(source), source
        assert may_set_attributes(source, "self"), source
    checked = 0
    for node, source in _methods():
        if _sets_one(node):
            checked += 1
            assert direct(source, node), ast.unparse(node)
    assert checked > 20


def test_summaries_built_from_lazy_trees_read_back_from_the_cache_the_same(monkeypatch, tmp_path):
    import test_project
    from test_project import _lint, _with_store

    plain, _ = _project_findings(monkeypatch, test_project.CONSTRUCTORS, False, tmp_path, "plain")
    monkeypatch.setattr(lazytree, "_MIN_CHARS", 0)
    root = tmp_path / "cached"
    root.mkdir()
    train = test_project.make(root, files=test_project.CONSTRUCTORS, package="pkg")
    cold = _with_store(root, tmp_path / "cache")
    assert _lint(train, cold) == plain and cold.built > 0
    warm = _with_store(root, tmp_path / "cache")
    assert _lint(train, warm) == plain and warm.built == 0


# ---------------------------------------------------------------- files checked

def _findings(result):
    return [(v.code, v.line, v.col, v.end_line, v.end_col, v.message,
             v.fix and [(e.start, e.end, e.text) for e in v.fix.edits]) for v in result.violations]


def test_a_checked_file_gives_what_a_whole_parse_gives(monkeypatch):
    """The file checked is parsed with its bodies on demand: the findings, their fixes and the
    errors are those of a whole parse, for every fixture and rule example."""
    compared = found = 0
    for text in _sources():
        monkeypatch.setattr(lazytree, "parse", lambda text, found=None: lazytree._quiet_parse(text))
        whole = lint_text(text)
        monkeypatch.undo()
        monkeypatch.setattr(lazytree, "_MIN_CHARS", 0)
        lazy = lint_text(text)
        monkeypatch.undo()
        assert (_findings(lazy), lazy.error) == (_findings(whole), whole.error), text
        compared += 1
        found += bool(whole.violations)
    assert compared > 200 and found > 80


BODY_THAT_DOES_NOT_PARSE = """\
import torch


def train(model, x):
    return model(x).numpy()


def unrelated(path):
    with open(path) as f:
    return f.read()
"""


def test_a_body_no_rule_reads_is_not_parsed_unless_there_is_something_to_report(monkeypatch):
    """Only the bodies the analysis reads are parsed, and the rest before anything is reported:
    a syntax error in a body no rule looks at goes unseen in a file with nothing to report (a
    linter of tensor copies is no syntax checker), and is the file's error, with no finding, in a
    file with something to report."""
    monkeypatch.setattr(lazytree, "_MIN_CHARS", 0)
    reads = []
    real = lazytree.LazyBody._load

    def load(self):
        reads.append(self._src[1].name)
        return real(self)

    monkeypatch.setattr(lazytree.LazyBody, "_load", load)
    # `model` is unknown: nothing to report (without --strict), and `unrelated` is never parsed.
    result = lint_text(BODY_THAT_DOES_NOT_PARSE)
    assert (result.violations, result.error) == ([], None)
    assert reads == ["train"]
    # A model for certain: TNS101 reports in `train`, so the file is parsed whole first.
    reads.clear()
    with_model = BODY_THAT_DOES_NOT_PARSE.replace("x).numpy()", "x).numpy()\n\n\nout = train(torch.nn.Linear(2, 2), torch.ones(2))")
    result = lint_text(with_model)
    assert result.violations == [] and "expected an indented block" in result.error
    assert reads == ["train", "unrelated"]
    fixed = with_model.replace("    return f.read()", "        return f.read()")
    assert [v.code for v in lint_text(fixed).violations] == ["TNS101"]


def _collected_without_the_cyclic_collector(make) -> bool:
    """Whether what `make()` returns is freed as soon as nothing refers to it, the cyclic
    garbage collector paused."""
    import gc
    import weakref

    collecting = gc.isenabled()
    gc.disable()
    try:
        ref = weakref.ref(make())
        return ref() is None
    finally:
        if collecting:
            gc.enable()


SOURCE_WITH_BODIES = "import torch\n\n\n" + "".join(
    f"def f{i}(x):\n    y = x + {i}\n    return y * 2\n\n\n" for i in range(40))


def test_a_released_lazy_tree_is_freed_at_once(eager_threshold):
    # An unread body and its function refer to each other: the functions wait for the cyclic
    # collector, unless released (what the engine does at the end of a check).
    def parsed(release):
        tree = lazytree.parse(SOURCE_WITH_BODIES)
        assert lazytree.unread(tree.body[1].body)
        if release:
            lazytree.release(tree)
        return tree.body[1]

    assert not _collected_without_the_cyclic_collector(lambda: parsed(False))
    assert _collected_without_the_cyclic_collector(lambda: parsed(True))


def test_the_engine_releases_the_tree_it_parsed(eager_threshold, monkeypatch):
    made = []
    real = lazytree.parse
    monkeypatch.setattr(lazytree, "parse", lambda text, found=None: made.append(real(text, found)) or made[-1])
    import weakref

    def check():
        lint_text(SOURCE_WITH_BODIES + "def g(t):\n    return t.numpy()\n")
        assert made and lazytree.unread(made[-1].body[1].body) is False  # (released: read as empty)
        return weakref.ref(made.pop().body[1])

    import gc

    collecting = gc.isenabled()
    gc.disable()
    try:
        assert check()() is None
    finally:
        if collecting:
            gc.enable()


# ---------------------------------------------------------------- asked before the parse

def _sure_layout(text):
    found = lazytree.layout(text)
    return found if found is not None and lazytree.is_sure(text, found) else None


def _tree_functions(text):
    """(line, offset of the def line, offset after the last line, offset of the body's first
    line) of each function outside functions, as the walker reads them from a whole parse."""
    from flake8_tensorcopy.analysis.astutil import BLOCKS, first_body_line
    from flake8_tensorcopy.source import LineIndex

    starts = LineIndex(text).starts
    found = []
    stack = list(ast.parse(text).body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            end = starts[node.end_lineno] if node.end_lineno < len(starts) else len(text)
            first = first_body_line(node)
            body = starts[first - 1] if first > node.lineno else None
            found.append((node.lineno, starts[node.lineno - 1], end, body))
        elif type(node) in BLOCKS:
            for field in BLOCKS[type(node)]:
                stack.extend(getattr(node, field))
    return sorted(found)


def test_a_sure_layout_gives_the_functions_a_parse_gives(eager_threshold):
    """What the engine asks the scope filter of before parsing a file (each function's text, and
    the code outside their bodies) is what the walker would ask of the parsed tree."""
    sure = 0
    for text in _sources():
        try:
            ast.parse(text)
        except SyntaxError:
            continue
        layout = _sure_layout(text)
        if layout is None:
            continue
        sure += 1
        assert sorted((f[4], f[0], f[11], f[10]) for f in layout) == _tree_functions(text), text
    assert sure > 100


def test_a_decorated_first_statement_starts_the_body_read_or_not(eager_threshold):
    from flake8_tensorcopy.analysis.astutil import first_body_line

    source = ("def outer(fn):\n    # a comment\n    @wraps(fn)\n    def inner():\n        return fn()\n\n"
              "    return inner\n")
    func = lazytree.parse(source).body[0]
    assert lazytree.unread(func.body) and first_body_line(func) == 3
    assert len(func.body) == 2 and first_body_line(func) == 3


# A helper that writes to what it is given (TNS401 reports at the call), in a file whose text
# holds no leaf of its own: only the helper's own test admits it.
HELPER_CALLED = """
import torch

model = torch.nn.Linear(3, 3)


def reset(p):
    scale = max(1,
{continuation})
    p.zero_()


reset(model.weight)
"""


@pytest.mark.parametrize("continuation", ["2", "        2"])
def test_a_body_the_layout_may_end_early_is_asked_of_the_parsed_tree(eager_threshold, continuation):
    """A bracket continued on a line as little indented as the `def` would end its body in the
    layout (`p.zero_()` read as module code, where no rule looks for a helper's parameter): such
    a layout is not sure, and the file is parsed."""
    source = HELPER_CALLED.format(continuation=continuation).lstrip("\n")
    assert (_sure_layout(source) is None) == (continuation == "2")
    result = lint_text(source)
    # (Reported at the write, for the call at line 12.)
    assert result.parsed and [(v.code, v.line) for v in result.violations] == [("TNS401", 9)]


def test_a_def_the_layout_does_not_hold_is_asked_of_the_parsed_tree(eager_threshold):
    """A function the layout leaves to the parser (a triple quote in its header) is not in the
    code outside the functions: the layout is not sure, and the file is parsed."""
    source = HELPER_CALLED.format(continuation="2").replace(
        "def reset(p):\n    scale = max(1,\n2)\n", 'def reset(p, note="""a note"""):\n').lstrip("\n")
    assert 'def reset(p, note="""a note"""):\n    p.zero_()\n' in source
    assert _sure_layout(source) is None
    assert [(v.code, v.line) for v in lint_text(source).violations] == [("TNS401", 7)]


def test_a_file_whose_layout_admits_no_function_is_not_parsed(eager_threshold, monkeypatch):
    """Writes in place the whole text's test sees (`hidden += x` in a forward), none in a
    function the rule looks at: the file is not parsed."""
    source = textwrap.dedent('''
        import torch


        class Block(torch.nn.Module):
            def forward(self, hidden, x):
                hidden += x
                return hidden * self.weight
    ''').lstrip("\\n")
    parsed = []
    real = lazytree.parse
    monkeypatch.setattr(lazytree, "parse", lambda text, found=None: parsed.append(text) or real(text, found))
    result = lint_text(source)
    assert result.violations == [] and not result.parsed and not parsed
    # The walker would have found the same: nothing admitted (`_anything_admitted`).
    from flake8_tensorcopy.rules.tns4 import InplaceOnLeaf

    text_test = InplaceOnLeaf.scope_test(source)
    assert InplaceOnLeaf.scope_any(source, text_test)
    assert not any(text_test(source[f[0]:f[11]]) for f in _sure_layout(source))
