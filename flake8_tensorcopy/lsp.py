"""`tensorcopy lsp`: a Language Server over stdio with diagnostics and quick fixes.  A shell over the engine.

- Diagnostics on open and save, and on change from the unsaved buffer (debounced: the
  buffer is linted once the user has stopped typing for `DEBOUNCE_S`).
- Each diagnostic links to its rule's documentation (`codeDescription.href`, links.py).
- A quick fix per fixable diagnostic (the rule's fix title; unsafe fixes say "(unsafe)" and
  are never the preferred action), and a `source.fixAll.tensorcopy` action that applies what
  `tensorcopy fix` would.
- The project's `[tool.tensorcopy]` (the closest pyproject.toml above each document) decides
  what is checked, re-read when it changes.

Positions: the engine counts lines from 1 and columns in characters; LSP counts lines from 0
and columns in the encoding negotiated at `initialize` (UTF-16 code units unless the client
offers UTF-8 or UTF-32).  Full document sync: the client sends the whole buffer on change, so
line splitting is ours (Python's: \\n, \\r\\n, \\r), not the client's.

Needs pygls 2 (the `[lsp]` extra: `pip install '.[lsp]'` in a checkout).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import threading

from . import __version__
from . import config as _config
from .engine import fix_text, lint_text
from .model import FixSafety
from .notebook import cell_view, cell_violation
from .output import rule_url
from .selection import path_matches
from .source import LineIndex

logger = logging.getLogger(__name__)
DEBOUNCE_S = 0.3
SOURCE = "tensorcopy"
FIX_ALL_KIND = "source.fixAll.tensorcopy"
FIX_ALL_TITLE = "Fix all tensorcopy issues"


def main() -> int:
    try:
        server = create_server()
    except ImportError as exc:
        print(f"error: `tensorcopy lsp` needs pygls 2 ({exc}); install it with: pip install 'pygls>=2,<3' "
              "(what the [lsp] extra adds: pip install '.[lsp]' in a checkout, or "
              "pip install 'flake8-tensorcopy[lsp]' once released)", file=sys.stderr)
        return 2
    server.start_io()
    return 0


# --------------------------------------------------------------------------- positions


def _units(line: str, col: int, encoding: str) -> int:
    """The column `col` (characters) of `line` in the client's position encoding."""
    if encoding == "utf-32" or line.isascii():
        return col
    prefix = line[:col]
    if encoding == "utf-8":
        return len(prefix.encode("utf-8", "surrogatepass"))
    return len(prefix.encode("utf-16-le", "surrogatepass")) // 2


def _chars(line: str, units: int, encoding: str) -> int:
    """The character column of a column in the client's position encoding."""
    if encoding == "utf-32" or line.isascii():
        return min(units, len(line))
    codec = "utf-8" if encoding == "utf-8" else "utf-16-le"
    width = 1 if encoding == "utf-8" else 2
    data = line.encode(codec, "surrogatepass")[: units * width]
    return len(data.decode(codec, "ignore"))


class Positions:
    """Engine positions and text offsets <-> LSP positions, for one text."""

    def __init__(self, text: str, encoding: str) -> None:
        self.lines = LineIndex(text)
        self.encoding = encoding

    def position(self, line: int, col: int):
        """LSP Position of a 1-based line and 0-based character column."""
        from lsprotocol import types

        line = min(max(line, 1), len(self.lines.starts))
        return types.Position(line=line - 1, character=_units(self.lines.line(line), col, self.encoding))

    def at(self, offset: int):
        return self.position(*self.lines.position(offset))

    def offset(self, pos) -> int:
        line = min(pos.line + 1, len(self.lines.starts))
        return self.lines.starts[line - 1] + _chars(self.lines.line(line), pos.character, self.encoding)


# --------------------------------------------------------------------------- configuration


class Configs:
    """The settings for each document: its closest configuration, re-read when it changes."""

    def __init__(self) -> None:
        self._loaded: dict[str, tuple] = {}
        self.reported: set = set()

    def settings(self, path: str | None):
        """(Settings, error message or None)."""
        try:
            found = _config.find(path) if path else None
        except _config.ConfigError as exc:
            return _config.resolve(_config.Config(root=os.getcwd())), str(exc)
        if found is None:
            return _config.resolve(_config.Config(root=os.path.dirname(path) if path else os.getcwd())), None
        try:
            st = os.stat(found)
            stamp = (st.st_mtime_ns, st.st_size)
        except OSError:
            stamp = None
        cached = self._loaded.get(found)
        if cached is not None and cached[0] == stamp:
            return cached[1], cached[2]
        try:
            result = (_config.resolve(_config.load(found)), None)
        except _config.ConfigError as exc:
            result = (_config.resolve(_config.Config(root=os.path.dirname(found))), str(exc))
        self._loaded[found] = (stamp, *result)
        return result


_NO_LOCK = contextlib.nullcontext()


class Projects:
    """The projects of the open documents (whole-project analysis), and which project modules
    each document's findings depend on: a saved module makes its dependents re-checked."""

    def __init__(self) -> None:
        self._by_root: dict = {}
        self.lock = threading.Lock()  # linting runs on worker threads; summaries are shared
        self.deps: dict = {}  # uri -> paths of the project modules its last check used
        # path -> the words whose files its last check read (Project.files_mentioning): a file that
        # comes to mention one may change its findings.
        self.words: dict = {}

    def for_path(self, path: str | None, cache_dir: str | None = None):
        """The project of `path`; `cache_dir`: the configuration's `cache-dir`, if it sets one."""
        if not path:
            return None
        from .analysis.project import Project
        from .reach import find_root

        root = os.path.realpath(find_root(path))
        project = self._by_root.get(root)
        if project is None:
            from .cache import CACHE_DIR, summary_store

            project = self._by_root[root] = Project(root)
            # The project's summary cache, as `tensorcopy check` and the flake8 plugin keep it:
            # after a save only what changed is walked again.
            project.store = summary_store(cache_dir or os.path.join(root, CACHE_DIR), lambda p=project: p.options)
        return project

    def changed(self, path: str) -> None:
        """A file was saved: the summaries of its project are read again from disk."""
        from . import reach

        reach.forget()  # (a module may have been created or deleted)
        real = os.path.realpath(path)
        for root in list(self._by_root):
            if real.startswith(root + os.sep):
                del self._by_root[root]

    def dependents(self, path: str) -> list:
        real = os.path.realpath(path)
        return [uri for uri, deps in self.deps.items() if real in deps]

    def mentioned(self, path: str) -> set:
        """The paths of the documents whose last check read the files that mention a word the
        file at `path` now holds (a new caller of a function whose total they report)."""
        if not self.words:
            return set()
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            return set()
        return {p for p, words in self.words.items() if any(w.encode() in data for w in words)}


def lint_document(text: str, path: str | None, settings, ipython: bool = False, project=None, projects=None):
    """(violations, the rules that ran) for a buffer, or None when it does not parse.

    `ipython`: the buffer is a notebook cell, cleaned up as IPython does (leading indentation)
    and with its magics and shell escapes skipped, the way `tensorcopy check` reads a notebook;
    positions are the cell's, and a fix that would touch a magic is not offered."""
    if path and any(path_matches(path, g, settings.root) for g in (*settings.exclude, *settings.extend_exclude)):
        return [], [], set()
    if path and path.endswith(".ipynb") and not ipython:
        return [], [], set()  # a notebook's JSON opened as text: `tensorcopy check` reads those
    chosen = settings.selection.for_path(path)
    rules = chosen.rules
    view = cell_view(text) if ipython else text
    deps: set = set()
    try:
        if project is not None:
            with projects.lock if projects is not None else _NO_LOCK:
                project.options = settings.options
                project.begin()
                try:
                    result = lint_text(view, rules, settings.options, project=project, path=path)
                finally:
                    project.flush(1.0)  # (see Project.flush)
                deps = set(project.touched)
                if projects is not None and path:
                    if project.scanned_words:
                        projects.words[path] = set(project.scanned_words)
                    else:
                        projects.words.pop(path, None)
        else:
            result = lint_text(view, rules, settings.options)
    except Exception:  # a bug in a rule must not take the editor's server down
        logger.exception("tensorcopy: internal error while linting %s (please report it)", path or "a buffer")
        return None
    if result.error:
        return None
    found = chosen.keep(result.violations)
    if ipython:
        found = [cell_violation(text, v) for v in found]
    return found, rules, deps


# --------------------------------------------------------------------------- the server


def create_server():
    from lsprotocol import types
    from pygls.lsp.server import LanguageServer

    class TensorCopyServer(LanguageServer):
        def __init__(self) -> None:
            super().__init__("tensorcopy", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Full)
            self.configs = Configs()
            self.projects = Projects()
            self.pending: dict[str, asyncio.Task] = {}

        # helpers
        @property
        def encoding(self) -> str:
            enc = self.workspace.position_encoding or types.PositionEncodingKind.Utf16
            return enc.value if hasattr(enc, "value") else str(enc)

        def doc_path(self, doc) -> str | None:
            # A notebook cell's URI names its notebook (vscode-notebook-cell:/path/nb.ipynb#cell).
            return doc.path if doc.uri.startswith(("file:", "vscode-notebook-cell:")) else None

        def is_cell(self, doc) -> bool:
            return doc.uri.startswith("vscode-notebook-cell:")

        def lint_args(self, doc) -> tuple:
            """What linting `doc` needs, taken now (on the server's thread)."""
            path = self.doc_path(doc)
            settings = self.settings_for(doc)
            config = settings.config
            return (doc.source, path, settings, self.is_cell(doc),
                    self.projects.for_path(path, config.cache_dir if config is not None else None),
                    self.projects)

        def settings_for(self, doc):
            settings, error = self.configs.settings(self.doc_path(doc))
            if error and error not in self.configs.reported:
                self.configs.reported.add(error)
                self.window_show_message(types.ShowMessageParams(
                    type=types.MessageType.Error, message=f"tensorcopy: {error} (using the defaults)"))
            return settings

        def diagnostic(self, v, pos: Positions):
            return types.Diagnostic(
                range=types.Range(start=pos.position(v.line, v.col), end=pos.position(v.end_line, v.end_col)),
                message=v.message,
                severity=types.DiagnosticSeverity.Warning,
                code=v.code,
                code_description=types.CodeDescription(href=rule_url(v.code)),
                source=SOURCE,
            )

        def publish(self, uri: str, version, text: str, found) -> None:
            if found is None:  # does not parse: keep what is shown until it does again
                return
            self.projects.deps[uri] = found[2]
            pos = Positions(text, self.encoding)
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri=uri, version=version, diagnostics=[self.diagnostic(v, pos) for v in found[0]]))

        def lint_now(self, uri: str) -> None:
            self.cancel(uri)
            doc = self.workspace.get_text_document(uri)
            self.publish(uri, doc.version, doc.source, lint_document(*self.lint_args(doc)))

        def cancel(self, uri: str) -> None:
            task = self.pending.pop(uri, None)
            if task is not None:
                task.cancel()

        async def lint_later(self, uri: str) -> None:
            await asyncio.sleep(DEBOUNCE_S)
            doc = self.workspace.get_text_document(uri)
            version, args = doc.version, self.lint_args(doc)
            text = args[0]
            found = await asyncio.get_running_loop().run_in_executor(None, lint_document, *args)
            if self.workspace.get_text_document(uri).version == version:
                self.publish(uri, version, text, found)
            if self.pending.get(uri) is asyncio.current_task():
                del self.pending[uri]

        def workspace_edit(self, doc, edits):
            if self.client_capabilities.workspace and self.client_capabilities.workspace.workspace_edit \
                    and self.client_capabilities.workspace.workspace_edit.document_changes:
                return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(uri=doc.uri, version=doc.version),
                    edits=edits)])
            return types.WorkspaceEdit(changes={doc.uri: edits})

    server = TensorCopyServer()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TensorCopyServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.lint_now(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TensorCopyServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.cancel(uri)
        ls.pending[uri] = asyncio.ensure_future(ls.lint_later(uri))

    def to_recheck(ls: TensorCopyServer, uri: str, path: str | None) -> set:
        """The open documents to check again now that the file `uri` (at `path`) changed: all of
        them for a configuration, else the others that import it (its summary is read again)."""
        open_docs = ls.workspace.text_documents
        if uri.endswith("/" + _config.CONFIG_FILE):
            return {u for u in open_docs if u.endswith((".py", ".pyi"))}
        if not path:
            return set()
        ls.projects.changed(path)  # its summary, and its dependents' findings, may change
        found = {u for u in ls.projects.dependents(path) if u != uri and u in open_docs}
        mentioned = ls.projects.mentioned(path)
        if mentioned:  # (a file that now calls a function whose callers a document's findings read)
            found |= {u for u, doc in open_docs.items() if u != uri and ls.doc_path(doc) in mentioned}
        return found

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: TensorCopyServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        recheck = to_recheck(ls, uri, ls.doc_path(ls.workspace.get_text_document(uri)))
        if not uri.endswith("/" + _config.CONFIG_FILE):
            ls.lint_now(uri)
        for other in sorted(recheck):
            ls.lint_now(other)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: TensorCopyServer, params: types.InitializedParams) -> None:
        # Files that change outside the editor (a checkout, a formatter, another editor) change
        # what the open files that import them find: ask the client to tell us of them.
        workspace = ls.client_capabilities.workspace
        watched = workspace.did_change_watched_files if workspace else None
        if not (watched and watched.dynamic_registration):
            return
        try:
            await ls.client_register_capability_async(types.RegistrationParams(registrations=[types.Registration(
                id="tensorcopy-watched-files", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=[
                    types.FileSystemWatcher(glob_pattern="**/*.py"),
                    types.FileSystemWatcher(glob_pattern="**/" + _config.CONFIG_FILE)]))]))
        except Exception:  # a client that refuses: changes are seen when saved in the editor
            logger.debug("tensorcopy: the client did not register file watching", exc_info=True)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: TensorCopyServer, params: types.DidChangeWatchedFilesParams) -> None:
        from pygls.uris import to_fs_path

        recheck: set = set()
        for change in params.changes:
            uri = change.uri
            recheck |= to_recheck(ls, uri, to_fs_path(uri) if uri.startswith("file:") else None)
        for uri in sorted(recheck):
            ls.lint_now(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TensorCopyServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.cancel(uri)
        ls.projects.deps.pop(uri, None)
        if uri.startswith("file:"):
            from pygls.uris import to_fs_path

            ls.projects.words.pop(to_fs_path(uri), None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND]),
    )
    def code_action(ls: TensorCopyServer, params: types.CodeActionParams):
        doc = ls.workspace.get_text_document(params.text_document.uri)
        args = ls.lint_args(doc)
        text, settings = args[0], args[2]
        found = lint_document(*args)
        if not found:
            return []
        violations, rules = found[0], found[1]
        only = params.context.only

        def wanted(kind: str) -> bool:
            return only is None or any(kind == k or kind.startswith(f"{k}.") for k in only)

        pos = Positions(text, ls.encoding)
        actions = []
        if wanted(types.CodeActionKind.QuickFix):
            r = params.range
            for v in violations:
                if v.fix is None:
                    continue
                diag = ls.diagnostic(v, pos)
                start, end = diag.range.start, diag.range.end
                if (start.line, start.character) > (r.end.line, r.end.character) or \
                        (r.start.line, r.start.character) > (end.line, end.character):
                    continue
                safe = v.fix.safety is FixSafety.SAFE
                edits = [types.TextEdit(range=types.Range(start=pos.at(e.start), end=pos.at(e.end)), new_text=e.text)
                         for e in sorted(v.fix.edits, key=lambda e: (e.start, e.end, e.seq))]
                actions.append(types.CodeAction(
                    title=v.fix.title + ("" if safe else " (unsafe)"),
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diag],
                    edit=ls.workspace_edit(doc, edits),
                    is_preferred=safe,
                ))
        if wanted(FIX_ALL_KIND) and not ls.is_cell(doc):
            project = args[4]
            with ls.projects.lock:
                fixed = fix_text(text, rules, settings.options, unsafe=settings.unsafe_fixes, project=project,
                                 path=args[1])
            if not fixed.error and fixed.text != text:
                # One edit over the part that changed, so the cursor and folds elsewhere stay put.
                a = 0
                limit = min(len(text), len(fixed.text))
                while a < limit and text[a] == fixed.text[a]:
                    a += 1
                if 0 < a < len(text) and text[a - 1] == "\r" and text[a] == "\n":
                    a -= 1  # never split a \r\n
                b = 0
                while b < limit - a and text[len(text) - 1 - b] == fixed.text[len(fixed.text) - 1 - b]:
                    b += 1
                edit = types.TextEdit(range=types.Range(start=pos.at(a), end=pos.at(len(text) - b)),
                                      new_text=fixed.text[a:len(fixed.text) - b])
                actions.append(types.CodeAction(title=FIX_ALL_TITLE, kind=FIX_ALL_KIND,
                                                edit=ls.workspace_edit(doc, [edit])))
        return actions

    return server
