"""Front end: C preprocessing (pcpp), lexing with p4c's type-name lexer hack, LALR parsing (lark).

P4 is not context free at the token level: ``a < b`` and ``register<bit<32>>``
need to know which identifiers name types.  p4c's lexer asks the symbol table;
we do the same with a single pass over the tokens (P4 declares before use).
"""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import lark
from lark import Token
from pcpp import Preprocessor
from pcpp.preprocessor import Action, OutputDirective

from .. import progcache
from ..api import P4CompileError
from .literals import literal_problem

INCLUDE_DIR = str(Path(__file__).parents[1] / "p4include")
_GRAMMAR = Path(__file__).with_name("grammar.lark")
_PARSER: lark.Lark | None = None

_TYPE_TOKENS = {"bit", "int", "varbit", "bool", "error", "string", "tuple", "_", "<", ">", ",", "void",
                "[", "]"}
_RET_END = {">", "bool", "void", "error", "bit", "int", "string"}
_DECL_KW = {"header", "struct", "header_union", "parser", "control", "package"}


def _parser() -> lark.Lark:
    global _PARSER
    if _PARSER is None:
        _PARSER = lark.Lark(_GRAMMAR.read_text(), parser="lalr", lexer="basic",
                            propagate_positions=True, maybe_placeholders=True, cache=True)
    return _PARSER


#: Limits that keep a hostile program (e.g. a P4Runtime device config) from exhausting the
#: process: source size, preprocessed size, macro-expanded tokens, included file size.
MAX_SOURCE_BYTES = 4 << 20
MAX_OUTPUT_BYTES = 16 << 20
MAX_EXPANDED_TOKENS = 2_000_000  # p4src/dhc.p4 at DHC_LANES=256 expands ~0.8 M
MAX_INCLUDE_BYTES = 4 << 20


class _LimitExceeded(Exception):
    """Preprocessing stopped at a limit; the message says which."""


class _Pre(Preprocessor):
    def __init__(self, allow_include: bool = True) -> None:
        super().__init__()
        self.errors: list[str] = []
        self.line_directive = "#line"
        self.rewrite_paths = []
        self.allow_include = allow_include
        self.expanded_tokens = 0

    given: str = "<source>"

    def shown(self, source: str | None) -> str:
        """A file name for an error: the name the caller gave, never pcpp's absolute form of it
        (which would echo the server's working directory to a P4Runtime client)."""
        if not source:
            return self.given
        cwd = os.getcwd()
        if source == os.path.abspath(self.given):
            return self.given
        if source.startswith(cwd + os.sep):
            return os.path.relpath(source, cwd)
        return source

    def on_error(self, file, line, msg):  # noqa: D401 - pcpp hook
        self.errors.append(f"{self.shown(file)}:{line}:0: {msg}")

    def on_include_not_found(self, is_malformed, is_system_include, curdir, includepath):
        self.errors.append(f"{self.shown(self.lastfile)}:0:0: include file not found: {includepath}")
        raise OutputDirective(Action.IgnoreAndRemove)

    def include(self, tokens, original_line):
        """Refuse ``#include`` when the text must be self-contained (a device config: no file of
        the server's may be read on a client's behalf, and a FIFO must not block a thread)."""
        if not self.allow_include:
            where = tokens[0] if tokens else (original_line[0] if original_line else None)
            src = self.shown(self.lastfile)
            self.errors.append(f"{src}:{getattr(where, 'lineno', 0) or 0}:0: #include is not allowed "
                               "here: the program must be self-contained (preprocessed)")
            return
        yield from super().include(tokens, original_line)

    def on_file_open(self, is_system_include, includepath):
        """Open only regular files of bounded size (never a FIFO or device)."""
        st = os.stat(includepath)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{includepath}: not a regular file")
        if st.st_size > MAX_INCLUDE_BYTES:
            raise _LimitExceeded(f"included file {includepath} is {st.st_size} bytes "
                                 f"(limit {MAX_INCLUDE_BYTES})")
        return super().on_file_open(is_system_include, includepath)

    def expand_macros(self, tokens, expanding_from=[]):  # noqa: B006 - pcpp's signature
        out = super().expand_macros(tokens, expanding_from)
        self.expanded_tokens += len(out)
        if self.expanded_tokens > MAX_EXPANDED_TOKENS:
            raise _LimitExceeded(f"macro expansion produces more than {MAX_EXPANDED_TOKENS} tokens")
        return out

    def on_directive_unknown(self, directive, toks, ifpassthru, precedingtoks):
        """``#error`` stops compilation (as cpp does for p4c); ``#warning`` is dropped."""
        if directive.value == "error":
            text = "".join(t.value for t in toks).strip()
            self.errors.append(f"{self.shown(directive.source)}:{directive.lineno}:0: #error {text}")
            return True
        if directive.value == "warning":
            return True
        return None

    def on_comment(self, tok):
        return True

    lastfile: str | None = None


class _BoundedOutput(io.StringIO):
    """Preprocessed text, refusing to grow past MAX_OUTPUT_BYTES."""

    def write(self, s: str) -> int:
        if self.tell() + len(s) > MAX_OUTPUT_BYTES:
            raise _LimitExceeded(f"preprocessed program exceeds {MAX_OUTPUT_BYTES} bytes")
        return super().write(s)


def preprocess_text(text: str, filename: str = "<source>", defines: dict[str, str] | None = None,
                    include_dirs: Sequence[str] = (), allow_include: bool = True) -> str:
    """Run the C preprocessor; the output keeps ``#line`` markers so errors map to original files.

    ``allow_include=False`` (a P4Runtime device config) refuses every ``#include``: no file is
    opened, not even the bundled ``core.p4``/``v1model.p4``."""
    if len(text) > MAX_SOURCE_BYTES:
        raise P4CompileError(f"program is {len(text)} bytes (limit {MAX_SOURCE_BYTES})", filename, 0, 0)
    search: list[str] = []
    if allow_include:
        search = [str(d) for d in include_dirs]
        if filename and os.path.dirname(filename):
            search.append(os.path.dirname(os.path.abspath(filename)))
        search.append(INCLUDE_DIR)
    return progcache.preprocessed(text, filename, defines, search, allow_include,
                                  lambda: _run_preprocessor(text, filename, defines, search, allow_include))


def _run_preprocessor(text: str, filename: str, defines: dict[str, str] | None, search: Sequence[str],
                      allow_include: bool) -> str:
    pre = _Pre(allow_include)
    for d in search:
        pre.add_path(d)
    for k, v in (defines or {}).items():
        pre.define(f"{k} {v}" if v not in (None, "") else f"{k} 1")
    pre.lastfile = pre.given = filename
    out = _BoundedOutput()
    try:
        pre.parse(text, source=filename)
        pre.write(out)
    except _LimitExceeded as err:
        raise P4CompileError(str(err), filename, 0, 0) from None
    except RecursionError:
        raise P4CompileError("preprocessing nests too deep", filename, 0, 0) from None
    if pre.errors:
        first = pre.errors[0]
        parts = first.split(":", 3)
        raise P4CompileError(parts[3].strip() if len(parts) > 3 else first, parts[0],
                             int(parts[1]) if parts[1].isdigit() else 0, 0)
    return out.getvalue()


def preprocess(path: str, defines: dict[str, str] | None = None, include_dirs: Sequence[str] = ()) -> str:
    """Preprocess a P4 file into self-contained source text (the P4Runtime device config)."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise P4CompileError("not a regular file", str(path), 0, 0)
        if st.st_size > MAX_SOURCE_BYTES:
            raise P4CompileError(f"program is {st.st_size} bytes (limit {MAX_SOURCE_BYTES})",
                                 str(path), 0, 0)
        text = Path(path).read_text()
    except OSError as e:
        raise P4CompileError(f"cannot read program: {e.strerror}", str(path), 0, 0) from e
    except UnicodeDecodeError as e:
        raise P4CompileError(f"not a P4 source file (not UTF-8 text at byte {e.start})",
                             str(path), 0, 0) from None
    return preprocess_text(text, str(path), defines, include_dirs)


@dataclass
class LineMap:
    """Maps lines of preprocessed text back to (file, line) of the original sources."""

    entries: list[tuple[str, int]] = field(default_factory=list)
    program: str = "<source>"  # named by errors about the program as a whole (line 0)

    def where(self, line: int) -> tuple[str, int]:
        if 1 <= line <= len(self.entries):
            return self.entries[line - 1]
        return (self.program, line)


def strip_line_markers(text: str, filename: str) -> tuple[str, LineMap]:
    """Blank out ``#line``/``# N "file"`` markers and record where each line came from."""
    lines = text.split("\n")
    given_abs = os.path.abspath(filename)
    lm = LineMap(program=filename)
    cur_file, cur_line = filename, 1
    out = []
    for ln in lines:
        s = ln.strip()
        if s.startswith("#"):
            parts = s[1:].split()
            if parts and parts[0] == "line":
                parts = parts[1:]
            if parts and parts[0].isdigit():
                cur_line = int(parts[0])
                if len(parts) > 1:
                    cur_file = parts[1].strip('"')
                    if cur_file == given_abs:
                        cur_file = filename
                lm.entries.append((cur_file, cur_line))
                out.append("")
                continue
            if parts and parts[0] == "pragma":
                lm.entries.append((cur_file, cur_line))
                cur_line += 1
                out.append("")
                continue
        lm.entries.append((cur_file, cur_line))
        cur_line += 1
        out.append(ln)
    return "\n".join(out), lm


def _retype(tokens: list[Token]) -> list[Token]:
    """Mark type names (TYPE_IDENTIFIER) and call type-argument '<' (TLT), as p4c's lexer does.

    Three passes: type names (P4 declares before use), then the '<' of explicit type arguments,
    then '>' '>' outside type brackets as the shift operator."""
    out = _TypeNameMarker(tokens).mark()
    _mark_type_argument_lts(out)
    return _join_shift_operators(out)


def _as_type(t: Token) -> Token:
    return Token.new_borrow_pos("TYPE_IDENTIFIER", str(t), t)


class _TypeNameMarker:
    """The first pass of ``_retype``: one walk over the tokens that learns the declared type names
    and the scopes of type parameters (generic structs, externs, methods and functions) and marks
    each identifier naming a type as TYPE_IDENTIFIER."""

    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.n = len(tokens)
        self.types: set[str] = set()
        self.scopes: list[tuple[set[str], int, bool]] = []  # (names, brace depth, ends at ';')
        self.depth = 0
        self.extern_depths: list[int] = []  # brace depth of each extern body being read

    def mark(self) -> list[Token]:
        out: list[Token] = []
        for i, t in enumerate(self.tokens):
            self._open_prototype_scope(i)
            self._open_function_scope(i, out)
            t = self._classify(i, t)
            self._track_scopes(t)
            out.append(t)
        return out

    def is_type(self, v: str) -> bool:
        return v in self.types or any(v in s[0] for s in self.scopes)

    def type_params(self, j: int) -> tuple[set[str], int]:
        """The names of a type-parameter list ``<T, U>`` opening at token j (empty if there is none
        or it is not one), and the index of its closing '>'."""
        tokens, n = self.tokens, self.n
        names: set[str] = set()
        if j < n and tokens[j] == "<":
            k = j + 1
            while k < n and tokens[k] != ">":
                if tokens[k].type == "IDENTIFIER":
                    names.add(str(tokens[k]))
                elif tokens[k] != ",":
                    return set(), j
                k += 1
            return names, k
        return names, j

    def prototype_params(self, j: int) -> set[str]:
        """Generic parameters of the method/function prototype starting at token j."""
        tokens, n = self.tokens, self.n
        while j < n and str(tokens[j]) not in ("(", ";", "{", "}"):
            if str(tokens[j]) == "<" and tokens[j - 1].type == "IDENTIFIER":
                names, _ = self.type_params(j)
                return names
            j += 1
        return set()

    def _open_prototype_scope(self, i: int) -> None:
        """A method prototype in an extern body, or an extern function: its type parameters are
        types up to the ';' ending it."""
        tokens, v = self.tokens, str(self.tokens[i])
        prev_s = str(tokens[i - 1]) if i else ""
        in_body = self.extern_depths and self.depth == self.extern_depths[-1] + 1 and prev_s in ("{", ";")
        if in_body or (v == "extern" and i + 2 < self.n and str(tokens[i + 2]) not in ("{", "<")):
            names = self.prototype_params(i + 1 if v == "extern" else i)
            if names:
                self.scopes.append((names, self.depth, True))

    def _open_function_scope(self, i: int, out: list[Token]) -> None:
        """A generic function ``R f<T, U>(...) {...}``: T, U are types up to its closing brace
        (p4c's grammar: the return type, already in ``out``, may be one of them)."""
        tokens, n = self.tokens, self.n
        if not (self.depth == 0 and tokens[i].type == "IDENTIFIER" and i and i + 1 < n
                and tokens[i + 1] == "<"
                and (tokens[i - 1].type == "IDENTIFIER" or str(tokens[i - 1]) in _RET_END)):
            return
        names, end = self.type_params(i + 1)
        if names and end + 1 < n and str(tokens[end + 1]) == "(" and _has_body(tokens, end + 1):
            self.scopes.append((names, self.depth, False))
            if out and str(out[-1]) in names:
                out[-1] = _as_type(out[-1])

    def _classify(self, i: int, t: Token) -> Token:
        """The token, as TYPE_IDENTIFIER if it names a type in scope or declares one (a header,
        struct, parser, control, package, extern, enum or typedef name)."""
        if t.type != "IDENTIFIER":
            return t
        v = str(t)
        if self.is_type(v):
            return _as_type(t)
        tokens = self.tokens
        prev = str(tokens[i - 1]) if i else ""
        nxt = str(tokens[i + 1]) if i + 1 < self.n else None
        if prev in _DECL_KW:
            self.types.add(v)
            names, _ = self.type_params(i + 1)
            if names:  # a struct's or header's type parameters end with its closing brace
                self.scopes.append((names, self.depth, prev not in ("header", "struct", "header_union")))
            return _as_type(t)
        if prev == "extern" and nxt in ("{", "<"):
            self.types.add(v)
            names, _ = self.type_params(i + 1)
            self.scopes.append((names, self.depth, False))
            self.extern_depths.append(self.depth)
            return _as_type(t)
        if (nxt == "{" and _enum_name(tokens, i)) or (nxt == ";" and _typedef_name(tokens, i)):
            self.types.add(v)
            return _as_type(t)
        return t

    def _track_scopes(self, t: Token) -> None:
        """Brace depth; a '}' closes the scopes opened at its depth that end at a brace, a ';'
        those that end at a ';'."""
        v = str(t)
        if v == "{" and t.type != "STRING_LIT":
            self.depth += 1
        elif v == "}" and t.type != "STRING_LIT":
            self.depth -= 1
            self.scopes = [s for s in self.scopes if not (not s[2] and s[1] >= self.depth)]
            while self.extern_depths and self.extern_depths[-1] >= self.depth:
                self.extern_depths.pop()
        elif v == ";":
            self.scopes = [s for s in self.scopes if not (s[2] and s[1] >= self.depth)]


def _mark_type_argument_lts(out: list[Token]) -> None:
    """The '<' opening explicit type arguments of a call (or constructor), ``f<bit<8>>(x)``,
    becomes TLT: a '<' after a name whose bracket holds only types and is followed by '('."""
    for i, t in enumerate(out):
        if t == "<" and t.type != "STRING_LIT" and i and out[i - 1].type in ("IDENTIFIER", "TYPE_IDENTIFIER"):
            k = _type_args_end(out, i)
            if k is not None and k + 1 < len(out) and out[k + 1] == "(":
                out[i] = Token.new_borrow_pos("TLT", "<", t)


def _type_args_end(out: list[Token], i: int) -> int | None:
    """The index of the '>' closing the bracket opened at ``out[i]``, or None if it holds anything
    but type tokens or does not close."""
    d = 0
    for k in range(i, len(out)):
        s = str(out[k])
        if s == "<":
            d += 1
        elif s == ">":
            d -= 1
            if d == 0:
                return k
        elif not (s in _TYPE_TOKENS or out[k].type in ("TYPE_IDENTIFIER", "INTEGER")):
            return None
    return None


def _join_shift_operators(out: list[Token]) -> list[Token]:
    """Adjacent '>' '>' outside type-argument brackets are the shift operator (SHR)."""
    res: list[Token] = []
    depth = 0
    j = 0
    while j < len(out):
        t = out[j]
        if t.type == "TLT" or (t == "<" and j and (str(out[j - 1]) in ("bit", "int", "varbit", "tuple")
                                                   or out[j - 1].type == "TYPE_IDENTIFIER")):
            depth += 1
        elif t == ">" and t.type != "STRING_LIT":
            if depth:
                depth -= 1
            elif j + 1 < len(out) and out[j + 1] == ">" and out[j + 1].line == t.line \
                    and out[j + 1].column == t.column + 1:
                res.append(Token.new_borrow_pos("SHR", ">>", t))
                j += 2
                continue
        res.append(t)
        j += 1
    return res


def _has_body(tokens: list[Token], open_paren: int) -> bool:
    """Is the parameter list opening at ``open_paren`` followed by a body ``{`` (a function
    declaration, not an extern prototype)?"""
    d = 0
    for k in range(open_paren, len(tokens)):
        v = str(tokens[k])
        d += (v == "(") - (v == ")")
        if d == 0:
            return k + 1 < len(tokens) and str(tokens[k + 1]) == "{"
    return False


def _entry_priorities(tokens: list[Token]) -> list[Token]:
    """``priority = N:`` opening an entry of an ``entries`` list (P4_16 1.2.4): the keyword only
    there, so ``priority`` stays an ordinary identifier everywhere else (as in p4c's grammar)."""
    depth, inside = 0, -1
    for i, t in enumerate(tokens):
        v = str(t)
        if t.type == "STRING_LIT":
            continue
        if v == "{":
            depth += 1
            if i >= 2 and tokens[i - 2].type == "KW_ENTRIES" and str(tokens[i - 1]) == "=":
                inside = depth
        elif v == "}":
            if depth == inside:
                inside = -1
            depth -= 1
        elif (v == "priority" and depth == inside and i + 1 < len(tokens) and str(tokens[i + 1]) == "="
              and str(tokens[i - 1]) in ("{", ";", "const")):
            tokens[i] = Token.new_borrow_pos("KW_PRIORITY", v, t)
    return tokens


def _enum_name(tokens: list[Token], i: int) -> bool:
    j = i - 1
    while j >= 0 and str(tokens[j]) not in (";", "{", "}"):
        if str(tokens[j]) == "enum":
            return True
        j -= 1
    return False


def _typedef_name(tokens: list[Token], i: int) -> bool:
    j = i - 1
    while j >= 0 and str(tokens[j]) not in (";", "{", "}"):
        if str(tokens[j]) in ("typedef", "type"):
            return True
        j -= 1
    return False


@dataclass
class ParsedProgram:
    tree: lark.Tree
    lines: LineMap


def parse(text: str, filename: str = "<source>") -> ParsedProgram:
    """Parse preprocessed text into a lark tree, raising P4CompileError with original positions."""
    clean, lm = strip_line_markers(text, filename)
    p = _parser()
    try:
        toks = list(p.lex(clean))
    except lark.exceptions.UnexpectedCharacters as e:
        f, ln = lm.where(e.line)
        raise P4CompileError(f"unexpected character {clean[e.pos_in_stream]!r}", f, ln, e.column) from None
    for t in toks:
        problem = literal_problem(str(t)) if t.type == "INTEGER" else None
        if problem:
            f, ln = lm.where(t.line)
            raise P4CompileError(problem, f, ln, t.column)
    toks = _entry_priorities(_retype(toks))
    ip = p.parse_interactive("")
    try:
        for t in toks:
            ip.feed_token(t)
        tree = ip.feed_eof(toks[-1] if toks else None)
    except lark.exceptions.UnexpectedToken as e:
        tok = e.token
        line = getattr(tok, "line", None) or (toks[-1].line if toks else 0)
        col = getattr(tok, "column", None) or 0
        f, ln = lm.where(line)
        what = "end of input" if tok.type == "$END" else repr(str(tok))
        raise P4CompileError(f"syntax error: unexpected {what}", f, ln, col) from None
    _array_declarators(tree)
    return ParsedProgram(tree, lm)


def _array_declarators(tree: lark.Tree) -> None:
    """p4c's C-style declarators, ``bit<8> a[2][3];``, as the spec's ``bit<8>[3][2] a;`` (as in
    C, ``a`` holds 2 arrays of 3); ``tuple<>`` as a tuple type with no type arguments."""
    for node in tree.iter_subtrees():
        if node.data == "tuple_type0":  # tuple<>: the empty tuple type
            node.data, node.children = "tuple_type", [lark.Tree("type_args", [], meta=node.meta)]
            continue
        if node.data not in ("field_arr", "var_decl_arr"):
            continue
        ann, t, name, dims = node.children[:4]
        for d in reversed(dims.children):
            t = lark.Tree("stack_type", [t, d], meta=dims.meta)
        node.children = [ann, t, name, *node.children[4:]]
        node.data = "field" if node.data == "field_arr" else "var_decl"
