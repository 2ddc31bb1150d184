"""`tensorcopy lsp` end to end: a real LSP client (pytest-lsp) drives the server over stdio.

Each test starts `python -m flake8_tensorcopy lsp` with the capabilities of a real editor
(VS Code: UTF-16 positions and versioned document changes; Neovim 0.11: UTF-8 positions and
plain `changes`; Emacs: UTF-32), opens a buffer, waits for its diagnostics, asks for code
actions, applies the returned edit the way an editor would, and checks the buffer is clean.
"""

import asyncio
import re
import subprocess
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from flake8_tensorcopy.engine import lint_text
from flake8_tensorcopy.links import rule_url
from flake8_tensorcopy.rules.base import all_rules

SERVER = [sys.executable, "-m", "flake8_tensorcopy", "lsp"]
EDITORS = ["visual-studio-code", "neovim@v0.11.0", "emacs"]
# The emoji is one character, two UTF-16 code units and four UTF-8 bytes: every column after
# it on line 4 differs between the three position encodings.
BAD = (
    "import torch\n"
    "\n"
    "x = torch.ones(3, requires_grad=True)\n"
    "s = '\U0001f600'; y = x.clone().detach()\n"
)
FIXED = BAD.replace("y = x.clone().detach()", "y = x.detach().clone()")


@pytest.fixture(scope="module", params=EDITORS)
def editor(request):
    return request.param


def _recording_client() -> LanguageClient:
    """pytest-lsp's test client, also keeping every publishDiagnostics in order (with versions)."""
    client = LanguageClient(converter_factory=default_converter)
    client.published = []  # not yet looked at
    client.history = []  # all of them

    def publish(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        client.diagnostics[params.uri] = params.diagnostics
        client.published.append(params)
        client.history.append(params)

    client.registrations = []

    def register(client: LanguageClient, params: types.RegistrationParams) -> None:
        client.registrations.extend(params.registrations)  # (an editor starts watching files)

    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: publish,
                                   types.CLIENT_REGISTER_CAPABILITY: register})
    return client


# One server per editor, shared by the tests (each works in its own directory and buffers).
@pytest_lsp.fixture(scope="module", config=ClientServerConfig(server_command=SERVER, client_factory=_recording_client))
async def client(lsp_client: LanguageClient, editor, tmp_path_factory):
    root = tmp_path_factory.mktemp("workspace")
    params = types.InitializeParams(
        capabilities=client_capabilities(editor),
        root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="project")],
    )
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


# --------------------------------------------------------------------------- an editor's side


def _encoding(client: LanguageClient) -> str:
    general = client.capabilities.general
    for enc in (general.position_encodings or []) if general else []:
        if enc in ("utf-8", "utf-16", "utf-32"):
            return enc
    return "utf-16"


def _offset(text: str, pos: types.Position, encoding: str) -> int:
    lines = re.split(r"(?<=\n)|(?<=\r)(?!\n)", text)
    start = sum(len(line) for line in lines[: pos.line])
    line = lines[pos.line] if pos.line < len(lines) else ""
    if encoding == "utf-32":
        return start + pos.character
    codec, width = ("utf-8", 1) if encoding == "utf-8" else ("utf-16-le", 2)
    return start + len(line.encode(codec)[: pos.character * width].decode(codec))


def _apply(text: str, edit: types.WorkspaceEdit, uri: str, encoding: str) -> str:
    if edit.document_changes:
        (change,) = edit.document_changes
        assert change.text_document.uri == uri
        edits = change.edits
    else:
        edits = edit.changes[uri]
    spans = sorted(((_offset(text, e.range.start, encoding), _offset(text, e.range.end, encoding), e.new_text)
                    for e in edits), reverse=True)
    for s, e, new in spans:
        text = text[:s] + new + text[e:]
    return text


async def published(client: LanguageClient, uri: str, version=None, timeout: float = 20):
    """The first publishDiagnostics for `uri` (at `version`) since the last call for it."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        for i, params in enumerate(client.published):
            if params.uri == uri and (version is None or params.version == version):
                client.published[:] = [p for j, p in enumerate(client.published) if j > i or p.uri != uri]
                return params
        await asyncio.sleep(0.01)
    raise TimeoutError(f"no diagnostics for {uri} (version {version})")


class Buffer:
    def __init__(self, client: LanguageClient, path, text: str):
        self.client, self.uri, self.text, self.version = client, path.as_uri(), text, 1
        path.write_text(text, encoding="utf-8")
        client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=self.uri, language_id="python", version=1, text=text)))

    async def diagnostics(self):
        """The diagnostics published for this buffer's current version."""
        return list((await published(self.client, self.uri, self.version)).diagnostics)

    def change(self, text: str) -> None:
        self.text, self.version = text, self.version + 1
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))

    async def actions(self, rng=None, only=None, diagnostics=()):
        rng = rng or types.Range(start=types.Position(line=0, character=0), end=types.Position(line=10**4, character=0))
        return await self.client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=self.uri), range=rng,
            context=types.CodeActionContext(diagnostics=list(diagnostics), only=only)))

    def apply(self, action: types.CodeAction) -> None:
        self.change(_apply(self.text, action.edit, self.uri, _encoding(self.client)))


# --------------------------------------------------------------------------- tests


@pytest.mark.asyncio(loop_scope="module")
async def test_diagnostic_quick_fix_then_clean(client: LanguageClient, editor, tmp_path):
    buf = Buffer(client, tmp_path / "train.py", BAD)
    (diag,) = await buf.diagnostics()
    assert (diag.code, diag.source) == ("TNS201", "tensorcopy")
    # The rule's documentation, which editors link from the code (issue 18).
    assert diag.code_description.href == rule_url("TNS201", "clone-before-detach")
    assert "use x.detach().clone()" in diag.message
    # The finding starts after the emoji: its column is in the client's encoding.
    line = BAD.splitlines()[3]
    col = line.index("x.clone()")
    enc = _encoding(client)
    units = {"utf-8": len(line[:col].encode()), "utf-16": col + 1, "utf-32": col}[enc]
    assert diag.range.start == types.Position(line=3, character=units)
    assert diag.range.end.character - diag.range.start.character == len("x.clone().detach()")

    actions = await buf.actions(rng=diag.range, diagnostics=[diag])
    quick = [a for a in actions if a.kind == types.CodeActionKind.QuickFix]
    assert [a.title for a in quick] == ["Swap to `.detach().clone()`"]
    assert quick[0].is_preferred and quick[0].diagnostics[0].code == "TNS201"
    buf.apply(quick[0])
    assert buf.text == FIXED
    assert await buf.diagnostics() == []


@pytest.mark.asyncio(loop_scope="module")
async def test_fix_all_source_action(client: LanguageClient, editor, tmp_path):
    text = BAD + "z = x.clone().detach()\nw = torch.tensor(x)\n"
    buf = Buffer(client, tmp_path / "train.py", text)
    assert len(await buf.diagnostics()) >= 2
    # What VS Code asks for on save with "source.fixAll" enabled.
    (action,) = await buf.actions(only=[types.CodeActionKind.SourceFixAll])
    assert (action.title, action.kind) == ("Fix all tensorcopy issues", "source.fixAll.tensorcopy")
    buf.apply(action)
    fixed = subprocess.run([sys.executable, "-m", "flake8_tensorcopy", "fix", "-"], input=text,
                           capture_output=True, text=True).stdout
    assert buf.text == fixed  # the same fixes as `tensorcopy fix`
    assert await buf.diagnostics() == []
    assert not await buf.actions(only=[types.CodeActionKind.QuickFix])


def _unsafe_example():
    for cls in all_rules():
        for ex in cls.INVALID:
            if ex.unsafe and ex.fixed is not None and not ex.options:
                return cls, ex
    return None, None


@pytest.mark.asyncio(loop_scope="module")
async def test_unsafe_fix_is_offered_marked_and_not_preferred(client: LanguageClient, editor, tmp_path):
    cls, ex = _unsafe_example()
    if cls is None:
        pytest.skip("no rule has an unsafe fix")
    buf = Buffer(client, tmp_path / "m.py", ex.code)
    diags = [d for d in await buf.diagnostics() if d.code == cls.code]
    assert diags
    titles = {f"{v.fix.title} (unsafe)" for v in lint_text(ex.code).violations if v.code == cls.code}
    actions = await buf.actions(rng=diags[0].range)
    unsafe = [a for a in actions if a.title in titles]
    assert unsafe and not any(a.is_preferred for a in unsafe)
    # Fix all applies safe fixes only, unless the project says otherwise.
    (tmp_path / "pyproject.toml").write_text("[tool.tensorcopy]\nunsafe-fixes = true\n")
    fix_all = [a for a in await buf.actions(only=["source.fixAll"])]
    assert fix_all
    buf.apply(fix_all[0])
    assert buf.text == ex.fixed


@pytest.mark.asyncio(loop_scope="module")
async def test_changes_are_debounced_and_read_from_the_unsaved_buffer(client: LanguageClient, editor, tmp_path):
    buf = Buffer(client, tmp_path / "train.py", FIXED)
    assert await buf.diagnostics() == []
    # Three quick edits (never saved): only the last one is linted.
    buf.change(BAD + "z = x.clone().detach()\n")
    buf.change(BAD)
    buf.change(BAD.replace("s = '\U0001f600'; ", ""))
    (diag,) = await buf.diagnostics()
    assert diag.range.start == types.Position(line=3, character=4)
    assert [p.version for p in client.history if p.uri == buf.uri] == [1, 4]
    assert (tmp_path / "train.py").read_text(encoding="utf-8") == FIXED


@pytest.mark.asyncio(loop_scope="module")
async def test_project_configuration_is_honoured(client: LanguageClient, editor, tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.tensorcopy]\nper-file-ignores = { "tests/*" = ["TNS201"] }\n')
    (tmp_path / "tests").mkdir()
    ignored = Buffer(client, tmp_path / "tests" / "test_x.py", BAD)
    assert await ignored.diagnostics() == []
    checked = Buffer(client, tmp_path / "train.py", BAD)
    assert [d.code for d in await checked.diagnostics()] == ["TNS201"]
    # A broken configuration is shown to the user, never a crash; the defaults apply.
    (tmp_path / "pyproject.toml").write_text("[tool.tensorcopy]\nnumpy-fix = 'sideways'\n")
    checked.change(BAD + "\n")
    assert [d.code for d in await checked.diagnostics()] == ["TNS201"]
    assert any("numpy-fix" in m.message and "pyproject.toml" in m.message for m in client.messages)


def test_missing_pygls_is_a_clear_error():
    code = ("import sys; sys.modules['pygls'] = None; sys.modules['pygls.lsp.server'] = None\n"
            "from flake8_tensorcopy.cli import main; sys.exit(main(['lsp']))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert "pip install 'flake8-tensorcopy[lsp]'" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.asyncio(loop_scope="module")
async def test_notebook_cell_with_magics(client: LanguageClient, editor, tmp_path):
    """A cell sent as a text document (VS Code does so for Python cells) keeps working with magics."""
    (tmp_path / "pyproject.toml").write_text('[tool.tensorcopy]\nignore = ["TNS202"]\n')
    cell = "%matplotlib inline\n!pip install tqdm\n" + BAD + "z = torch.tensor(x)\n"
    uri = f"vscode-notebook-cell:{(tmp_path / 'nb.ipynb').as_posix()}#W1sZmlsZQ%3D%3D"
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=cell)))
    params = await published(client, uri)
    # TNS202 is off: the notebook's own pyproject.toml applies to its cells.
    assert [(d.code, d.range.start.line) for d in params.diagnostics] == [("TNS201", 5)]


@pytest.mark.asyncio(loop_scope="module")
async def test_saving_a_project_module_rechecks_its_open_dependents(client: LanguageClient, editor, tmp_path):
    # Whole-project analysis (issue 15): train.py's finding comes from models.py.
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    frozen = "import torch\nfrom torch import nn\n\nmodel = nn.Linear(3, 2).requires_grad_(False)\n"
    models = Buffer(client, pkg / "models.py", frozen)
    assert await models.diagnostics() == []
    train = Buffer(client, pkg / "train.py", "import torch\nfrom .models import model\n\n"
                   "out = model(torch.randn(2, 3)).numpy()\n")
    assert await train.diagnostics() == []
    thawed = frozen.replace(".requires_grad_(False)", "")
    models.change(thawed)
    (pkg / "models.py").write_text(thawed)
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=models.uri)))
    (diag,) = list((await published(client, train.uri)).diagnostics)
    assert diag.code == "TNS101" and "models.py" in diag.message


@pytest.mark.asyncio(loop_scope="module")
async def test_the_server_gives_the_project_findings_the_cli_gives(client: LanguageClient, editor, tmp_path):
    # The multi-file project of tests/test_project.py (a re-export, a base class, a no-grad
    # helper and a frozen model in other files, an import cycle): the same lines as the CLI.
    from test_project import EXPECTED, make

    train = make(tmp_path, package="lsp_pkg")
    diags = await Buffer(client, train, train.read_text()).diagnostics()
    assert sorted((d.code, d.range.start.line + 1) for d in diags) == EXPECTED


@pytest.mark.asyncio(loop_scope="module")
async def test_the_server_reports_a_meter_of_another_module(client: LanguageClient, editor, tmp_path):
    # tests/test_project.py's METERS: AverageMeter.update() in utils.py keeps each loss's graph.
    from test_project import METER_FINDINGS, METERS, make

    train = make(tmp_path, files=METERS, package="lsp_meters")
    diags = await Buffer(client, train, train.read_text()).diagnostics()
    assert [(d.code, d.range.start.line + 1, d.message) for d in diags] == METER_FINDINGS


@pytest.mark.asyncio(loop_scope="module")
async def test_the_server_reports_a_discriminator_loss_of_another_module(client: LanguageClient, editor, tmp_path):
    # tests/test_project.py's GAN_HELPERS: d_loss_fn() in losses.py and sample() in sampling.py.
    from test_project import GAN_HELPER_FINDINGS, GAN_HELPERS, make

    train = make(tmp_path, files=GAN_HELPERS, package="lsp_gan")
    diags = await Buffer(client, train, train.read_text()).diagnostics()
    assert [(d.code, d.range.start.line + 1, d.message) for d in diags] == GAN_HELPER_FINDINGS


@pytest.mark.asyncio(loop_scope="module")
async def test_the_server_reports_a_total_that_other_modules_only_display(client: LanguageClient, editor, tmp_path):
    # tests/test_project.py's TOTALS: train_epoch() in trainer.py, displayed by train.py.
    from test_project import TOTALS, make

    make(tmp_path, files=TOTALS, package="lsp_totals")
    trainer = tmp_path / "lsp_totals" / "trainer.py"
    diags = await Buffer(client, trainer, trainer.read_text()).diagnostics()
    assert [(d.code, d.range.start.line + 1) for d in diags] == [("TNS503", 11)]
    assert "train.py:11" in diags[0].message


@pytest.mark.asyncio(loop_scope="module")
async def test_a_new_caller_of_a_function_whose_total_is_reported_rechecks_it(client: LanguageClient, editor,
                                                                               tmp_path):
    # trainer.py's TNS503 rests on the files that mention train_epoch (only train.py, which
    # displays the total).  A file created outside the editor that back-propagates through what
    # train_epoch returns is none of its dependencies, but it mentions the function: trainer.py is
    # checked again, and its total is no longer one that nothing differentiates.
    from test_project import TOTALS, make

    make(tmp_path, files=TOTALS, package="lsp_new_caller")
    trainer = tmp_path / "lsp_new_caller" / "trainer.py"
    buffer = Buffer(client, trainer, trainer.read_text())
    assert [(d.code, d.range.start.line + 1) for d in await buffer.diagnostics()] == [("TNS503", 11)]
    keep = tmp_path / "lsp_new_caller" / "keep.py"
    keep.write_text("from .trainer import train_epoch\n\n\ndef fit(model, batches, opt):\n"
                    "    total = train_epoch(model, batches, opt)\n    total.backward()\n")
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=keep.as_uri(), type=types.FileChangeType.Created)]))
    assert list((await published(client, buffer.uri)).diagnostics) == []


@pytest.mark.asyncio(loop_scope="module")
async def test_a_file_that_never_mentions_torch_gets_its_project_findings(client: LanguageClient, editor, tmp_path):
    # tests/test_project.py's THROUGH: evaluate.py imports no torch, its models do.
    from test_project import THROUGH, make

    make(tmp_path, files=THROUGH, package="lsp_through")
    evaluate = tmp_path / "lsp_through" / "evaluate.py"
    diags = await Buffer(client, evaluate, evaluate.read_text()).diagnostics()
    assert sorted((d.code, d.range.start.line + 1) for d in diags) == [("TNS101", 8), ("TNS103", 13)]


@pytest.mark.asyncio(loop_scope="module")
async def test_a_project_module_changed_outside_the_editor_rechecks_its_open_dependents(
        client: LanguageClient, editor, tmp_path):
    # A checkout or a formatter changes models.py on disk, which is not open: the client's
    # workspace/didChangeWatchedFiles makes the server check train.py again.
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    pkg = tmp_path / "watched_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    frozen = "import torch\nfrom torch import nn\n\nmodel = nn.Linear(3, 2).requires_grad_(False)\n"
    (pkg / "models.py").write_text(frozen)
    train = Buffer(client, pkg / "train.py", "import torch\nfrom .models import model\n\n"
                   "out = model(torch.randn(2, 3)).numpy()\n")
    assert await train.diagnostics() == []
    watching = client.capabilities.workspace and client.capabilities.workspace.did_change_watched_files
    if watching and watching.dynamic_registration:  # the server asked to be told of *.py changes
        (reg,) = [r for r in client.registrations if r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES]
        assert "**/*.py" in [w["globPattern"] for w in reg.register_options["watchers"]]
    (pkg / "models.py").write_text(frozen.replace(".requires_grad_(False)", ""))
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=(pkg / "models.py").as_uri(), type=types.FileChangeType.Changed)]))
    (diag,) = list((await published(client, train.uri)).diagnostics)
    assert diag.code == "TNS101" and "models.py" in diag.message


@pytest.mark.asyncio(loop_scope="module")
async def test_a_project_module_created_outside_the_editor_is_found(client: LanguageClient, editor, tmp_path):
    # evaluate.py never mentions torch and imports a module that does not exist yet: nothing to
    # analyse.  Once helpers.py is created (and uses torch), the next check of evaluate.py finds
    # it: where the project's modules are is not remembered past a change (reach.forget).
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    pkg = tmp_path / "created_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    text = "from .helpers import scale\n\n\ndef predict(x):\n    return scale(x).numpy()\n"
    evaluate = Buffer(client, pkg / "evaluate.py", text)
    assert await evaluate.diagnostics() == []
    helpers = pkg / "helpers.py"
    helpers.write_text("import torch\n\n\ndef scale(x):\n    return torch.nn.Linear(2, 2)(x)\n")
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=helpers.as_uri(), type=types.FileChangeType.Created)]))
    evaluate.change(text + "\n")
    (diag,) = await evaluate.diagnostics()
    assert diag.code == "TNS101" and diag.range.start.line == 4
