#!/usr/bin/env python3
"""Architecture checks over a Rust crate's sources: no import circles between modules or
folders, no long functions.

Usage: python3 scripts/check_architecture.py [--max-fn-lines 80] [--skip-tests] [--graph]
                                             [--no-reexport-edges] [--self-test] [SRC ...]

SRC is a crate's source folder (default: src/ next to this script's folder); give several to
check, say, src and keepsake-cli/src. Exit status 1 if either check fails, 2 on a usage error.
Standard library only; nothing is compiled, so it reads the sources without cfg evaluation
(every `#[cfg]`'d module and item is included).

1. Module graph. A node is a module file (lib.rs/main.rs, foo.rs, foo/mod.rs), found by
   following `mod foo;` declarations from the crate root (`#[path]` too; src/bin/* are crates
   of their own). Inline modules (`mod x { .. }`) are part of their file's node, except
   `#[cfg(test)]` ones, which are nodes of their own (`foo::tests`): nothing imports a test
   module, so its imports, its parent's included, never make a circle.
   An edge A -> B means code in A names something defined in B, through
     - `use` declarations at any level: `use`, `pub use`, `pub(crate) use`, nested brace
       trees, `self` in braces, `as` renames;
     - paths anywhere in the code, in macro calls and bodies too: `crate::a::b::f(..)`,
       `super::x::Y`, `$crate::..`, `child::f()`, `Imported::CONST`;
     - a glob `use path::*`: each identifier of A that the glob's module provides and A does
       not define or import by name. A `pub use child::*` is an edge to `child` itself.
   Paths are resolved roughly as rustc does: from `crate`/`self`/`super` or a name in scope,
   through child modules, to the deepest module that exists (`crate::a::b::Item::f` where
   a/b.rs exists -> `a::b`), and through imports and re-exports, chains and globs included, to
   the module that defines the item: `use super::Thing`, where the parent only has
   `pub use child::Thing`, is an edge to `child`, not to the parent. Not edges: `mod child;`,
   and a `use` that only names a module (`use super::view;`; the paths through it,
   `view::draw(..)`, are the edges). A name not found in a module of the crate is taken to be
   defined there (macro-generated items); paths into other crates are ignored. Comments (doc
   comments and intra-doc links included) and string literals are skipped.
   A `pub use` of a name its module does not itself use (a pure re-export) is an edge, marked
   `[re-export only]` in the report; --no-reexport-edges leaves such edges out.
   Every strongly connected component (Tarjan) of more than one module is a circle, printed as
   its members, the pairs that import each other, one shortest cycle through it with an
   example site (file:line) per hop, then the other edges inside it.

   Folders too: each module edge A -> B is lifted to the entries of A's and B's nearest common
   module that hold them (a file, or a sub-folder with everything in it), and the entries of
   each folder must not make a circle either (`a/x.rs -> b/y.rs` and `b/w.rs -> a/z.rs` is a
   circle between the folders a and b that no two modules close). An edge between a folder's
   own file (`mod.rs`) and a module it holds is not lifted: the module check sees those. Test
   modules are left out.

2. Function length. Every `fn` with a body (free functions, methods, trait default methods,
   nested fns, fns in test modules; not closures) is measured from the line of its `fn`
   keyword to the line of its closing brace, both included: attributes and doc comments above
   it are not counted, its signature is. Braces in strings, raw strings, byte and char
   literals ('{' but not lifetimes 'a) and comments are ignored. Methods are reported as
   `Type::method` (trait impls too), nested fns as `outer::inner`. By default all of SRC
   counts; with --skip-tests, test code is left out: files named tests.rs or under a tests/
   folder, modules declared `#[cfg(test)]`, and functions marked `#[test]` (or any attribute
   path ending in `test`, such as `#[tokio::test]`) or `#[cfg(test)]`.

--graph prints every module with the modules it imports.
"""

import argparse
import os
import re
import signal
import sys
import tempfile
from collections import deque
from pathlib import Path

DEFAULT_SRC = Path(__file__).resolve().parent.parent / "src"

# --------------------------------------------------------------------------------------------
# Lexer
# --------------------------------------------------------------------------------------------

ID, PUNCT, LIT, LIFETIME = "id", "p", "lit", "life"

_IDENT_START = re.compile(r"[A-Za-z_]|[^\x00-\x7f]")
_IDENT = re.compile(r"(?:[A-Za-z_]|[^\x00-\x7f])(?:\w|[^\x00-\x7f])*")
_RAW_STR = re.compile(r'(?:r|br|cr)(#*)"')
_NUMBER = re.compile(r"[0-9][0-9A-Za-z_]*(?:\.[0-9][0-9A-Za-z_]*)?(?:(?<=[eE])[+-][0-9_]+)?")


class Tok:
    __slots__ = ("kind", "text", "line")

    def __init__(self, kind, text, line):
        self.kind, self.text, self.line = kind, text, line

    def __repr__(self):
        return f"{self.kind}:{self.text}@{self.line}"


def tokenize(src):
    """Rust source -> tokens (comments dropped; strings and chars as one LIT token each)."""
    toks = []
    i, n, line = 0, len(src), 1
    if src.startswith("#!") and not src.startswith("#!["):  # shebang
        i = src.find("\n")
        i = n if i < 0 else i
    while i < n:
        c = src[i]
        if c == "\n":
            line += 1
            i += 1
            continue
        if c in " \t\r\f\v" or (c.isspace()):
            i += 1
            continue
        if c == "/" and i + 1 < n and src[i + 1] == "/":
            j = src.find("\n", i)
            i = n if j < 0 else j
            continue
        if c == "/" and i + 1 < n and src[i + 1] == "*":
            depth, j = 0, i
            while j < n:
                if src.startswith("/*", j):
                    depth += 1
                    j += 2
                elif src.startswith("*/", j):
                    depth -= 1
                    j += 2
                    if depth == 0:
                        break
                else:
                    if src[j] == "\n":
                        line += 1
                    j += 1
            i = j
            continue
        if c == '"':
            j = _string_end(src, i)
            toks.append(Tok(LIT, '""', line))
            line += src.count("\n", i, j)
            i = j
            continue
        if c == "'":
            j = _char_end(src, i)
            if j is not None:
                toks.append(Tok(LIT, "''", line))
                i = j
                continue
            m = _IDENT.match(src, i + 1)
            if m:
                toks.append(Tok(LIFETIME, "'" + m.group(), line))
                i = m.end()
            else:
                toks.append(Tok(PUNCT, "'", line))
                i += 1
            continue
        if _IDENT_START.match(c):
            m = _RAW_STR.match(src, i)
            if m:
                close = '"' + m.group(1)
                j = src.find(close, m.end())
                j = n if j < 0 else j + len(close)
                toks.append(Tok(LIT, '""', line))
                line += src.count("\n", i, j)
                i = j
                continue
            if c in "bc" and i + 1 < n and src[i + 1] == '"':
                j = _string_end(src, i + 1)
                toks.append(Tok(LIT, '""', line))
                line += src.count("\n", i, j)
                i = j
                continue
            if c == "b" and i + 1 < n and src[i + 1] == "'":
                j = _char_end(src, i + 1)
                if j is not None:
                    toks.append(Tok(LIT, "''", line))
                    i = j
                    continue
            if c == "r" and src.startswith("r#", i):
                m = _IDENT.match(src, i + 2)
                if m:
                    toks.append(Tok(ID, "r#" + m.group(), line))
                    i = m.end()
                    continue
            m = _IDENT.match(src, i)
            toks.append(Tok(ID, m.group(), line))
            i = m.end()
            continue
        if c.isdigit():
            m = _NUMBER.match(src, i)
            toks.append(Tok(LIT, m.group(), line))
            i = m.end()
            continue
        two = src[i : i + 2]
        if two in ("::", "->", "=>"):
            toks.append(Tok(PUNCT, two, line))
            i += 2
            continue
        toks.append(Tok(PUNCT, c, line))
        i += 1
    return toks


def _string_end(src, q):
    """Index just past the string literal whose opening quote is at q."""
    j, n = q + 1, len(src)
    while j < n:
        ch = src[j]
        if ch == "\\":
            j += 2
        elif ch == '"':
            return j + 1
        else:
            j += 1
    return n


def _char_end(src, q):
    """Index just past a char literal opening at q, or None if it is a lifetime or label."""
    n = len(src)
    if q + 1 >= n:
        return None
    if src[q + 1] == "\\":  # '\n', '\'', '\\', '\x7f', '\u{1F600}'
        j = src.find("'", q + 3)
        return None if j < 0 else j + 1
    if q + 2 < n and src[q + 2] == "'" and src[q + 1] != "\n":  # 'a', '{', '"'
        return q + 3
    return None


# --------------------------------------------------------------------------------------------
# Structure: modules, items, uses, functions
# --------------------------------------------------------------------------------------------

KEYWORDS = {
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum",
    "extern", "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move",
    "mut", "pub", "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true",
    "type", "unsafe", "use", "where", "while", "union",
}
ITEM_KEYWORDS = {"struct", "enum", "union", "type", "const", "static", "trait"}


class Namespace:
    """A Rust module (file or inline) for name resolution."""

    def __init__(self, name, parent, node, file, crate, is_test):
        self.name = name
        self.parent = parent
        self.node = node  # graph node id (a file, or an inline #[cfg(test)] module)
        self.file = file
        self.crate = crate
        self.is_test = is_test
        self.children = {}  # name -> Namespace
        self.items = set()  # names defined here
        self.imports = {}  # name -> path segments (relative to self)
        self.globs = []  # path segments of `use ...::*`
        self.root = parent.root if parent else self

    def path(self):
        parts = []
        ns = self
        while ns.parent is not None:
            parts.append(ns.name)
            ns = ns.parent
        return "::".join(reversed(parts))


class Frame:
    __slots__ = ("kind", "name", "ns", "line", "test", "full")

    def __init__(self, kind, name=None, ns=None, line=0, test=False):
        self.kind, self.name, self.ns, self.line, self.test = kind, name, ns, line, test


class Function:
    __slots__ = ("file", "line", "end", "name", "test")

    def __init__(self, file, line, end, name, test):
        self.file, self.line, self.end, self.name, self.test = file, line, end, name, test

    @property
    def lines(self):
        return self.end - self.line + 1


class UseEntry:
    __slots__ = ("segs", "name", "glob", "line", "ns", "public")

    def __init__(self, segs, name, glob, line, ns, public=False):
        self.segs, self.name, self.glob, self.line, self.ns = segs, name, glob, line, ns
        self.public = public


def _match(toks, i, open_, close):
    depth = 0
    for j in range(i, len(toks)):
        t = toks[j]
        if t.kind == PUNCT:
            if t.text == open_:
                depth += 1
            elif t.text == close:
                depth -= 1
                if depth == 0:
                    return j
    return len(toks) - 1


def attr_is_test(attr):
    """`#[test]`, `#[tokio::test]`, `#[cfg(test)]`, `#[cfg(all(test, ..))]` (not `not(test)`)."""
    ids = [t.text for t in attr if t.kind == ID]
    if not ids:
        return False
    if ids[0] == "cfg":
        return "test" in ids and "not" not in ids
    # a path attribute: test, tokio::test, rstest ...
    j = 0
    while j + 2 < len(attr) and attr[j + 1].text == "::":
        j += 2
    return attr[j].kind == ID and attr[j].text.endswith("test") and j + 1 == len(attr)


def strip_raw(name):
    return name[2:] if name.startswith("r#") else name


class FileAnalysis:
    """One file's tokens walked once: namespaces, uses, functions, token -> namespace."""

    def __init__(self, path, src, ns, is_test_file):
        self.path = path
        self.src = src
        self.toks = tokenize(src)
        self.tok_ns = [None] * len(self.toks)  # innermost module of each token
        self.in_use = bytearray(len(self.toks))
        self.uses = []  # UseEntry
        self.functions = []
        self.mod_decls = []  # (ns, name, is_test, path_attr, inline_dirs)
        self.file_ns = ns
        self.is_test_file = is_test_file
        self._walk()
        for k in range(len(self.tok_ns)):  # tokens the walk stepped over: the module before
            if self.tok_ns[k] is None:
                self.tok_ns[k] = self.tok_ns[k - 1] if k else ns

    # ---- helpers
    def _t(self, i):
        return self.toks[i] if 0 <= i < len(self.toks) else Tok(PUNCT, "<eof>", 0)

    def _impl_name(self, i):
        """Type name of the impl block whose `impl` keyword is at i."""
        toks = self.toks
        j = i + 1
        if self._t(j).text == "<":
            j = self._skip_angles(j)
        start = j
        angle = 0
        k = j
        for_at = None
        while k < len(toks):
            t = toks[k]
            if t.kind == PUNCT and t.text in ("{", ";"):
                break
            if t.kind == ID and t.text == "where" and angle == 0:
                break
            if t.kind == PUNCT and t.text == "<":
                angle += 1
            elif t.kind == PUNCT and t.text == ">":
                angle -= 1
            elif t.kind == ID and t.text == "for" and angle == 0:
                for_at = k
            k += 1
        lo = for_at + 1 if for_at is not None else start
        name = None
        angle = 0
        for t in toks[lo:k]:
            if t.kind == PUNCT and t.text == "<":
                angle += 1
            elif t.kind == PUNCT and t.text == ">":
                angle -= 1
            elif angle == 0 and t.kind == ID and t.text not in ("mut", "dyn", "const", "unsafe"):
                name = strip_raw(t.text)
        return name or "impl"

    def _skip_angles(self, j):
        depth = 0
        while j < len(self.toks):
            t = self.toks[j]
            if t.kind == PUNCT:
                if t.text == "<":
                    depth += 1
                elif t.text == ">":
                    depth -= 1
                    if depth == 0:
                        return j + 1
                elif t.text in ("{", ";"):
                    return j
            j += 1
        return j

    def _path_attr(self, attrs):
        """The file named by a `#[path = "..."]` attribute (read back from the source line)."""
        for a in attrs:
            if a and a[0].kind == ID and a[0].text == "path" and len(a) >= 3:
                line = self.src.splitlines()[a[0].line - 1]
                m = re.search(r'#\[\s*path\s*=\s*"([^"]*)"', line)
                if m:
                    return m.group(1)
        return None

    # ---- the walk
    def _walk(self):
        toks = self.toks
        n = len(toks)
        stack = []
        ns = self.file_ns
        pending = None  # Frame to open at the next '{' at depth pending_depth
        pending_depth = 0
        depth = 0  # () and [] nesting
        attrs = []
        i = 0

        def ns_level():
            return not stack or stack[-1].kind == "mod"

        def context_names():
            return [f.name for f in stack if f.kind in ("mod", "impl", "trait", "fn") and f.name]

        def in_test():
            return self.is_test_file or ns.is_test or any(f.test for f in stack)

        while i < n:
            t = toks[i]
            self.tok_ns[i] = ns
            if t.kind == PUNCT:
                x = t.text
                if x == "#":
                    j = i + 1
                    inner = self._t(j).text == "!"
                    if inner:
                        j += 1
                    if self._t(j).text == "[":
                        end = _match(toks, j, "[", "]")
                        for k in range(i, end + 1):
                            self.tok_ns[k] = ns
                        attr = toks[j + 1 : end]
                        if inner:
                            if attr_is_test(attr):
                                if stack and stack[-1].kind == "mod":
                                    stack[-1].test = True
                                ns.is_test = True if ns_level() else ns.is_test
                        else:
                            attrs.append(attr)
                        i = end + 1
                        continue
                elif x in "([":
                    depth += 1
                elif x in ")]":
                    depth -= 1
                elif x == "{":
                    if pending is not None and depth == pending_depth:
                        frame = pending
                        pending = None
                        if frame.kind == "mod":
                            parent = ns
                            node = parent.node
                            is_test = frame.test or parent.is_test
                            if frame.test and not parent.is_test:
                                node = parent.node + "::" + frame.name
                            child = Namespace(frame.name, parent, node, self.path, parent.crate,
                                              is_test)
                            parent.children[frame.name] = child
                            frame.ns = child
                            ns = child
                        stack.append(frame)
                    else:
                        stack.append(Frame("block"))
                    attrs = []
                elif x == "}":
                    if stack:
                        f = stack.pop()
                        if f.kind == "fn":
                            self.functions.append(
                                Function(self.path, f.line, t.line, f.full, f.test))
                        elif f.kind == "mod":
                            ns = f.ns.parent
                    attrs = []
                elif x == ";":
                    if pending is not None and depth == pending_depth:
                        pending = None
                    attrs = []
                elif x == ",":
                    attrs = []
                i += 1
                continue

            if t.kind != ID:
                i += 1
                continue
            x = t.text
            nxt = self._t(i + 1)
            prev = self._t(i - 1)
            if x == "use" and (pending is None or pending.kind != "fn"):
                end = self._parse_use(i, ns)
                for k in range(i, min(end + 1, n)):
                    self.in_use[k] = 1
                    self.tok_ns[k] = ns
                attrs = []
                i = end + 1
                continue
            if x == "fn" and nxt.kind == ID and (pending is None or pending.kind != "fn"):
                name = strip_raw(nxt.text)
                is_test = in_test() or any(attr_is_test(a) for a in attrs)
                pending = Frame("fn", name, None, t.line, is_test)
                pending.full = "::".join(context_names() + [name])
                pending_depth = depth
                if ns_level():
                    ns.items.add(name)
                attrs = []
                i += 2
                continue
            if x == "mod" and nxt.kind == ID and self._t(i + 2).text in ("{", ";"):
                name = strip_raw(nxt.text)
                is_test = any(attr_is_test(a) for a in attrs)
                if self._t(i + 2).text == ";":
                    inline_dirs = [f.name for f in stack if f.kind == "mod"]
                    self.mod_decls.append((ns, name, is_test or ns.is_test,
                                           self._path_attr(attrs), inline_dirs))
                    attrs = []
                    i += 3
                    continue
                pending = Frame("mod", name, None, t.line, is_test)
                pending_depth = depth
                attrs = []
                i += 2
                continue
            if x == "impl" and pending is None and prev.text not in ("&", "<", ",", "(", ":",
                                                                     "=", "->", "+"):
                pending = Frame("impl", self._impl_name(i), None, t.line,
                                any(attr_is_test(a) for a in attrs))
                pending_depth = depth
                attrs = []
                i += 1
                continue
            if x == "trait" and nxt.kind == ID and pending is None:
                name = strip_raw(nxt.text)
                if ns_level():
                    ns.items.add(name)
                pending = Frame("trait", name, None, t.line, any(attr_is_test(a) for a in attrs))
                pending_depth = depth
                attrs = []
                i += 2
                continue
            if (x in ITEM_KEYWORDS and nxt.kind == ID and nxt.text not in KEYWORDS
                    and ns_level() and pending is None and prev.text not in ("<", ",")):
                if x != "union" or self._t(i + 2).text in ("{", "<"):
                    ns.items.add(strip_raw(nxt.text))
                i += 2
                continue
            if x == "macro_rules" and nxt.text == "!" and self._t(i + 2).kind == ID:
                if ns_level():
                    ns.items.add(strip_raw(self._t(i + 2).text))
                i += 3
                continue
            if x == "extern" and nxt.text == "crate":
                # extern crate self as name;  /  extern crate foo as bar;
                j = i + 2
                target = self._t(j).text
                alias = target
                if self._t(j + 1).text == "as":
                    alias = self._t(j + 2).text
                if target == "self" and ns_level():
                    ns.imports[strip_raw(alias)] = ["crate"]
                i = j + 1
                continue
            i += 1
        # unclosed frames (broken source): close functions at the last line
        last = toks[-1].line if toks else 1
        for f in stack:
            if f.kind == "fn":
                self.functions.append(Function(self.path, f.line, last, f.full, f.test))

    def _parse_use(self, i, ns):
        """Parse `use TREE;` starting at token i; register entries; return index of the `;`."""
        toks = self.toks
        n = len(toks)
        entries = []

        def tree(j, prefix):
            segs = list(prefix)
            if j < n and toks[j].text == "::":
                segs.append("::")  # ::extern_crate::..
                j += 1
            while j < n:
                t = toks[j]
                if t.text == "{":
                    j += 1
                    while j < n and toks[j].text != "}":
                        j2 = tree(j, segs)
                        if j2 <= j:
                            return None
                        j = j2
                        if j < n and toks[j].text == ",":
                            j += 1
                    return j + 1
                if t.text == "*":
                    entries.append(UseEntry(segs, None, True, t.line, ns))
                    return j + 1
                if t.text == "$" and j + 1 < n and toks[j + 1].text == "crate":
                    j += 1
                    t = toks[j]
                if t.kind == ID:
                    segs.append(strip_raw(t.text))
                    j += 1
                    if j < n and toks[j].text == "::":
                        j += 1
                        continue
                    alias = None
                    if j + 1 < n and toks[j].text == "as":
                        alias = strip_raw(toks[j + 1].text)
                        j += 2
                    if segs[-1] == "self" and len(segs) > 1:
                        segs = segs[:-1]
                    name = alias if alias is not None else segs[-1]
                    entries.append(UseEntry(segs, name, False, t.line, ns))
                    return j
                return None
            return None

        j = tree(i + 1, [])
        # `pub use` / `pub(crate) use` / `pub(in path) use`
        p = i - 1
        if p >= 0 and toks[p].text == ")":
            while p >= 0 and toks[p].text != "(":
                p -= 1
            p -= 1
        public = p >= 0 and toks[p].text == "pub"
        # find the terminating ';' (robust against macros such as `use $path;`)
        k = j if j is not None else i + 1
        while k < n and toks[k].text != ";":
            if toks[k].text in ("{", "}") and j is None:
                break
            k += 1
        if j is None:
            return max(i, k - 1) if k < n and toks[k].text != ";" else k
        for e in entries:
            e.public = public
            if e.segs and e.segs[0] == "::":
                continue  # an extern crate's path
            if e.glob:
                ns.globs.append(e.segs)
            elif e.name != "_" and e.name not in ("crate", "super", "self"):
                ns.imports.setdefault(e.name, e.segs)
            self.uses.append(e)
        return k


# --------------------------------------------------------------------------------------------
# A crate: module tree, resolution, graph
# --------------------------------------------------------------------------------------------

EXTERNAL = "external"


class Crate:
    def __init__(self, root_file, label, src_dir, files_cache, reexport_edges=True):
        self.reexport_edges = reexport_edges
        self.root_file = root_file
        self.label = label
        self.src_dir = src_dir
        self.analyses = []  # FileAnalysis
        self.nodes = {}  # node id -> (file, is_test)
        self.missing = []  # (file, line, name) of `mod x;` with no file
        root_node = label or "crate"
        root = Namespace("crate", None, root_node, root_file, self, False)
        self.root = root
        self._load(root_file, root, is_mod_rs=True, is_test=False, files_cache=files_cache)
        self.edges = {}  # (a, b) -> [(file, line)]
        self._build_edges()

    def _node_name(self, ns):
        p = ns.path()
        if not p:
            return self.label or "crate"
        return (self.label + "::" + p) if self.label else p

    def _load(self, file, ns, is_mod_rs, is_test, files_cache):
        src = files_cache.read(file)
        fa = FileAnalysis(file, src, ns, is_test)
        self.analyses.append(fa)
        self.nodes[ns.node] = (file, ns.is_test)
        # inline test modules are nodes of their own
        for tok_ns in set(fa.tok_ns):
            if tok_ns.node not in self.nodes:
                self.nodes[tok_ns.node] = (file, True)
        for owner, name, decl_test, path_attr, inline_dirs in fa.mod_decls:
            base = file.parent if is_mod_rs else file.parent / file.stem
            for d in inline_dirs:
                base = base / d
            candidates = []
            if path_attr:
                candidates.append((file.parent if not inline_dirs else base) / path_attr)
            candidates += [base / (name + ".rs"), base / name / "mod.rs"]
            child_file = next((c for c in candidates if c.is_file()), None)
            if child_file is None:
                self.missing.append((file, name))
                continue
            child_test = decl_test or owner.is_test or _test_path(child_file, self.src_dir)
            child = Namespace(name, owner, None, child_file, self, child_test)
            child.node = self._node_name(child)
            owner.children[name] = child
            # a file named by #[path] is read like a mod.rs: its own `mod x;` are beside it
            self._load(child_file, child, child_file.name == "mod.rs" or path_attr is not None,
                       child_test, files_cache)

    # ---- resolution
    def resolve_path(self, ns, segs, tail_last=True, seen=None):
        """-> ('module'|'item', Namespace), EXTERNAL, or None (unknown)."""
        if seen is None:
            seen = set()
        if not segs:
            return ("module", ns)
        first, rest = segs[0], segs[1:]
        if first in ("crate", "$crate"):
            cur = ns.root
        elif first == "self":
            cur = ns
        elif first == "super":
            cur = ns.parent
            if cur is None:
                return None
        elif first == "::":
            return EXTERNAL
        else:
            r = self.resolve_name(ns, first, tail_last if not rest else False, seen)
            if r is None or r == EXTERNAL:
                return EXTERNAL  # not a name of this crate: another crate, a type parameter..
            if r[0] == "item":
                return r
            cur = r[1]
        for idx, s in enumerate(rest):
            last = idx == len(rest) - 1
            if s == "super":
                cur = cur.parent
                if cur is None:
                    return None
                continue
            if s == "self":
                continue
            r = self.resolve_name(cur, s, tail_last if last else False, seen)
            if r is None:
                return ("item", cur)  # not found: taken to be defined there
            if r == EXTERNAL:
                return EXTERNAL
            if r[0] == "item":
                return r
            cur = r[1]
        return ("module", cur)

    def resolve_name(self, ns, name, last, seen):
        key = (id(ns), name, last)
        if key in seen:
            return None
        seen.add(key)
        if last:
            order = ("items", "imports", "children")
        else:
            order = ("children", "imports", "items")
        for what in order:
            if what == "children" and name in ns.children:
                return ("module", ns.children[name])
            if what == "items" and name in ns.items:
                return ("item", ns)
            if what == "imports" and name in ns.imports:
                r = self.resolve_path(ns, ns.imports[name], last, seen)
                if r is None:
                    return ("item", ns)
                return r
        for g in ns.globs:
            gr = self.resolve_path(ns, g, False, seen)
            if isinstance(gr, tuple) and gr[0] == "module":
                r = self.resolve_name(gr[1], name, last, seen)
                if r is not None:
                    return r
        return None

    # ---- edges
    def _add_edge(self, src_ns, r, file, line, reexport=False):
        if not isinstance(r, tuple):
            return
        a, b = src_ns.node, r[1].node
        if a == b:
            return
        sites = self.edges.setdefault((a, b), [])
        for k, (f, ln, rx) in enumerate(sites):
            if f == file and ln == line:  # one site per line
                sites[k] = (f, ln, rx and reexport)
                return
        sites.append((file, line, reexport))

    def _build_edges(self):
        for fa in self.analyses:
            toks = fa.toks
            # names each namespace uses outside `use` declarations
            used = {}
            for i, t in enumerate(toks):
                if t.kind == ID and not fa.in_use[i]:
                    used.setdefault(id(fa.tok_ns[i]), set()).add(strip_raw(t.text))
            for e in fa.uses:
                if e.glob:
                    continue
                r = self.resolve_path(e.ns, e.segs)
                if isinstance(r, tuple) and r[0] == "module":
                    # `use super::view;` only names a module: the paths through it
                    # (`view::draw(..)`) are the edges, to the modules that define what they name
                    continue
                # a `pub use` of a name the module does not use itself only passes it on
                reexport = e.public and e.name not in used.get(id(e.ns), ())
                if reexport and not self.reexport_edges:
                    continue
                self._add_edge(e.ns, r, fa.path, e.line, reexport)
            # inline paths
            n = len(toks)
            for i, t in enumerate(toks):
                if fa.in_use[i] or t.kind != ID:
                    continue
                if i + 2 >= n or toks[i + 1].text != "::" or toks[i + 2].kind != ID:
                    continue
                prev = toks[i - 1].text if i else ""
                if prev == "::" or prev == "." or (t.text in KEYWORDS
                                                    and t.text not in ("crate", "self", "super")):
                    continue
                if prev == "in" and i >= 2 and toks[i - 2].text == "(":
                    continue  # pub(in crate::x)
                segs = [strip_raw(t.text)]
                j = i + 1
                while j + 1 < n and toks[j].text == "::" and toks[j + 1].kind == ID:
                    segs.append(strip_raw(toks[j + 1].text))
                    j += 2
                if prev == "$" and segs[0] == "crate":
                    segs[0] = "$crate"
                ns = fa.tok_ns[i]
                self._add_edge(ns, self.resolve_path(ns, segs), fa.path, t.line)
            # glob imports: the identifiers they provide
            globs_by_ns = {}
            for e in fa.uses:
                if e.glob:
                    globs_by_ns.setdefault(id(e.ns), (e.ns, []))[1].append(e)
            for ns, entries in globs_by_ns.values():
                targets = []
                for e in entries:
                    g = self.resolve_path(ns, e.segs, tail_last=False)
                    if isinstance(g, tuple):
                        if g[0] == "item" or e.public:
                            # `use Enum::*`, or a glob re-export `pub use child::*`
                            if g[0] == "module" and not self.reexport_edges:
                                continue
                            self._add_edge(ns, g, fa.path, e.line, g[0] == "module")
                        else:
                            targets.append(g[1])
                if not targets:
                    continue
                done = set()
                for i, t in enumerate(toks):
                    if fa.tok_ns[i] is not ns or fa.in_use[i] or t.kind != ID:
                        continue
                    name = strip_raw(t.text)
                    if name in done or name in KEYWORDS:
                        continue
                    prev = toks[i - 1].text if i else ""
                    if prev in ("::", "."):
                        continue
                    if name in ns.items or name in ns.imports or name in ns.children:
                        continue
                    for g in targets:
                        r = self.resolve_name(g, name, True, set())
                        if isinstance(r, tuple):
                            done.add(name)
                            self._add_edge(ns, r, fa.path, t.line)
                            break


def _test_path(path, src_dir):
    try:
        rel = path.relative_to(src_dir)
    except ValueError:
        rel = path
    return path.name == "tests.rs" or "tests" in rel.parts[:-1]


class FileCache:
    def __init__(self):
        self.texts = {}

    def read(self, path):
        if path not in self.texts:
            self.texts[path] = path.read_text(encoding="utf-8", errors="replace")
        return self.texts[path]


def crate_roots(src_dir):
    roots = []
    for name in ("lib.rs", "main.rs"):
        if (src_dir / name).is_file():
            roots.append((src_dir / name, name[:-3]))
    bins = src_dir / "bin"
    if bins.is_dir():
        for p in sorted(bins.iterdir()):
            if p.suffix == ".rs":
                roots.append((p, "bin/" + p.stem))
            elif (p / "main.rs").is_file():
                roots.append((p / "main.rs", "bin/" + p.name))
    return roots


# --------------------------------------------------------------------------------------------
# Graph algorithms
# --------------------------------------------------------------------------------------------


def tarjan(adj):
    """Strongly connected components (iterative Tarjan), each sorted, in discovery order."""
    index, low, on, stack, comps = {}, {}, set(), [], []
    counter = [0]
    for start in sorted(adj):
        if start in index:
            continue
        work = [(start, iter(sorted(adj[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(adj.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                comps.append(sorted(comp))
    return comps


def shortest_cycle(adj, members, start):
    """A shortest cycle start -> ... -> start inside `members` (BFS)."""
    prev = {start: None}
    q = deque([start])
    while q:
        v = q.popleft()
        for w in sorted(adj[v]):
            if w not in members:
                continue
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w not in prev:
                prev[w] = v
                q.append(w)
    return [start]


# --------------------------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------------------------


def rel(path):
    try:
        r = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if r.startswith("..") else r


def analyze_src(src_dir, reexport_edges=True):
    src_dir = Path(src_dir)
    cache = FileCache()
    roots = crate_roots(src_dir)
    crates = []
    multi = len(roots) > 1
    for root_file, label in roots:
        crates.append(Crate(root_file, label if multi else None, src_dir, cache, reexport_edges))
    return crates, cache


def check_modules(crates, out, show_graph):
    nodes, edges, circles = {}, {}, []
    for c in crates:
        nodes.update(c.nodes)
        for k, v in c.edges.items():
            edges.setdefault(k, []).extend(v)
    adj = {node: set() for node in nodes}
    for a, b in edges:
        adj.setdefault(a, set()).add(b)
        adj.setdefault(b, set())
    for comp in tarjan(adj):
        if len(comp) > 1:
            circles.append(comp)
    lines = []
    if show_graph:
        lines.append("module graph (module -> modules it imports):")
        for node in sorted(adj):
            deps = sorted(adj[node])
            tag = " [test]" if nodes.get(node, (None, False))[1] else ""
            lines.append(f"  {node}{tag} -> {', '.join(deps) if deps else '-'}")
    summary = f"module graph: {len(adj)} modules, {len(edges)} edges, "
    if not circles:
        summary += "no circles"
    else:
        summary += f"{len(circles)} circle{'s' if len(circles) > 1 else ''}"
    lines.append(summary)

    def site(a, b):
        sites = edges[(a, b)]
        f, ln, _ = sites[0]
        more = len(sites) - 1
        text = f"{rel(f)}:{ln}" + (f" (+{more} more)" if more else "")
        if all(reexport for _, _, reexport in sites):
            text += " [re-export only]"
        return text

    for k, comp in enumerate(circles, 1):
        members = set(comp)
        lines.append(f"  circle {k} ({len(comp)} modules): {', '.join(comp)}")
        mutual = [f"{a} <-> {b}" for a in comp for b in comp
                  if a < b and (a, b) in edges and (b, a) in edges]
        if mutual:
            lines.append("    importing each other: " + ", ".join(mutual))
        cyc = shortest_cycle(adj, members, comp[0])
        used = set()
        lines.append("    a cycle: " + " -> ".join(cyc))
        width = max(len(a) + len(b) for a in comp for b in comp) + 4
        for a, b in zip(cyc, cyc[1:]):
            used.add((a, b))
            lines.append(f"      {(a + ' -> ' + b).ljust(width)}  {site(a, b)}")
        rest = sorted((a, b) for (a, b) in edges if a in members and b in members
                      and (a, b) not in used)
        if rest:
            lines.append("    other edges inside it:")
            for a, b in rest:
                lines.append(f"      {(a + ' -> ' + b).ljust(width)}  {site(a, b)}")
    for c in crates:
        for f, name in c.missing:
            lines.append(f"  note: {rel(f)} declares `mod {name};` but no file was found")
    out.extend(lines)
    return not circles


def folder_edges(nodes, edges):
    """Module edges lifted to folders: for an edge A -> B between non-test modules, the entries
    of their nearest common module (a folder: `a/mod.rs` or `a.rs` with `a/`) that hold A and
    B, each the child module on the way down (a file, or a folder with all it holds). An edge
    between a folder's own file and a module it holds is not lifted (the module check sees
    circles through it). Returns {folder: {(entry_a, entry_b): [(a, b)]}}."""
    lifted = {}
    for a, b in edges:
        if nodes.get(a, (None, False))[1] or nodes.get(b, (None, False))[1]:
            continue  # test modules: nothing imports them, so they close no circle
        pa, pb = a.split("::"), b.split("::")
        common = 0
        while common < min(len(pa), len(pb)) and pa[common] == pb[common]:
            common += 1
        if common in (len(pa), len(pb)):
            continue  # a folder's own file and what it holds: the module check covers them
        ea, eb = pa[common], pb[common]
        folder = "::".join(pa[:common]) or "crate"
        lifted.setdefault(folder, {}).setdefault((ea, eb), []).append((a, b))
    return lifted


def check_folders(crates, out):
    """No circle between the entries of any folder (sibling files and sub-folders): a circle
    through a sub-folder is one the module check cannot see, since no two modules close it."""
    nodes, edges = {}, set()
    for c in crates:
        nodes.update(c.nodes)
        edges.update(c.edges)
    parents = {n.rsplit("::", 1)[0] for n in nodes if "::" in n}
    circles = []
    for folder, pairs in sorted(folder_edges(nodes, edges).items()):
        adj = {}
        for ea, eb in pairs:
            adj.setdefault(ea, set()).add(eb)
            adj.setdefault(eb, set())
        for comp in tarjan(adj):
            prefix = "" if folder == "crate" else folder + "::"
            if len(comp) > 1 and any(prefix + e in parents for e in comp):
                circles.append((folder, comp, adj, pairs))
    lines = [f"folder graph: {'no circles' if not circles else f'{len(circles)} circle(s)'}"]
    for folder, comp, adj, pairs in circles:
        lines.append(f"  circle in {folder}: {', '.join(comp)}")
        cyc = shortest_cycle(adj, set(comp), comp[0])
        for ea, eb in zip(cyc, cyc[1:]):
            a, b = sorted(pairs[(ea, eb)])[0]
            lines.append(f"    {ea} -> {eb}: e.g. {a} -> {b}")
    out.extend(lines)
    return not circles


def check_functions(src_dir, crates, cache, max_lines, skip_tests, out):
    src_dir = Path(src_dir)
    by_file = {}
    for c in crates:
        for fa in c.analyses:
            by_file.setdefault(fa.path, fa)
    orphans = []
    for p in sorted(src_dir.rglob("*.rs")):
        if p not in by_file:
            orphans.append(p)
            ns = Namespace("crate", None, str(p), p, None, _test_path(p, src_dir))
            by_file[p] = FileAnalysis(p, cache.read(p), ns, ns.is_test)
    funcs = []
    for p in sorted(by_file):
        for f in by_file[p].functions:
            if skip_tests and f.test:
                continue
            funcs.append(f)
    long = sorted((f for f in funcs if f.lines > max_lines), key=lambda f: (str(f.file), f.line))
    what = "functions" + (" (tests skipped)" if skip_tests else "")
    if long:
        out.append(f"{what}: {len(funcs)}, {len(long)} over {max_lines} lines")
        for f in long:
            out.append(f"  {rel(f.file)}:{f.line} {f.name} ({f.lines} lines)")
    else:
        out.append(f"{what}: {len(funcs)}, none over {max_lines} lines")
    if orphans:
        out.append(f"  note: not in any module tree (checked for length only): "
                   f"{', '.join(rel(p) for p in orphans)}")
    return not long


# --------------------------------------------------------------------------------------------
# Self-tests
# --------------------------------------------------------------------------------------------


def _crate_from(files):
    tmp = tempfile.TemporaryDirectory()
    root = Path(tmp.name)
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    crates, cache = analyze_src(root)
    return tmp, root, crates, cache


def _edges(crates):
    return {k for c in crates for k in c.edges}


def _funcs(crates):
    return {f.name: f.lines for c in crates for fa in c.analyses for f in fa.functions}


def self_test():
    failures = []

    def check(label, got, want):
        if got != want:
            failures.append(f"{label}: got {got!r}, want {want!r}")

    # lexer: strings with braces, raw strings, chars vs lifetimes, comments
    src = r'''fn a<'a>(x: &'a str) -> char {
    let s = "}{ \" }";
    let r = r#"..{.." "#;
    let b = br##"}"# still inside"##;
    let c = '{';
    let d = '\'';
    let e = '\u{7B}';
    let f = b'}';
    /* } /* nested } */ } */
    // }
    /// }
    'outer: loop { break 'outer; }
    c
}
'''
    toks = tokenize(src)
    braces = [t.text for t in toks if t.text in "{}"]
    check("lexer braces", braces, ["{", "{", "}", "}"])
    check("lexer lifetimes", [t.text for t in toks if t.kind == LIFETIME],
          ["'a", "'a", "'outer", "'outer"])
    check("lexer last line", toks[-1].line, 14)

    tmp, root, crates, _ = _crate_from({
        "lib.rs": """
mod a;
mod b;
mod c;
mod d;
pub mod p;
pub use p::Hub;
""",
        "a.rs": """
//! crate::b::nothing in a doc comment
use crate::{b::{self, Beta}, p::{Hub as H}};
pub struct Alpha;
fn long() -> u32 {
    let s = "crate::p::x }";
    let c = '}';
    fn nested() {
        let _ = 1;
    }
    1
}
""",
        "b.rs": """
pub struct Beta;
pub fn f() { let _ = crate::Hub; }
macro_rules! gamma { () => { $crate::c::Gamma }; }
""",
        "c.rs": "pub struct Gamma;\n",
        # importing a module is no edge; the paths through it are
        "d.rs": "use crate::p;\nfn k() { let _ = p::Gadget; let _ = p::H2; }\n",
        "p/mod.rs": """
mod inner;
mod deep;
pub use inner::Hub;
pub use deep::*;
pub(crate) use {inner::Hub as H2};
""",
        "p/inner.rs": """
pub struct Hub;
pub fn uses_parent() { let _ = super::Gadget; }
""",
        "p/deep.rs": """
pub struct Gadget;
fn g() { super::super::c::Gamma::new(); }
#[cfg(test)]
mod tests {
    use super::*;
    use crate::p::Hub;
    #[test]
    fn t() { let _ = Gadget; }
}
""",
    })
    with tmp:
        e = _edges(crates)
        want = {
            ("crate", "p::inner"),       # pub use p::Hub resolved through p's re-export
            ("a", "b"), ("a", "p::inner"),  # brace tree; `self` in braces; Hub as H
            ("b", "p::inner"),           # crate::Hub -> lib's re-export -> p's re-export
            ("p", "p::inner"), ("p", "p::deep"),  # re-exports (glob too)
            ("p::inner", "p::deep"),     # super::Gadget via p's glob re-export
            ("p::deep", "c"),            # super::super::c::Gamma::new(), inline path
            ("d", "p::deep"),            # p::Gadget through `use crate::p;` and p's glob
            ("d", "p::inner"),           # p::H2, a renamed re-export in a prefix-less brace tree
            ("b", "c"),                  # $crate:: in a macro body
            ("p::deep::tests", "p::inner"),  # test module node; glob gives Gadget (own module)
            ("p::deep::tests", "p::deep"),
        }
        check("edges", e, want)
        fl = _funcs(crates)
        check("fn lengths", {k: fl.get(k) for k in ("long", "long::nested", "g", "f")},
              {"long": 8, "long::nested": 3, "g": 1, "f": 1})
        out = []
        check("no circles", check_modules(crates, out, False), True)

    # cycles, impl names, trait default methods, -> impl Trait, cfg(test) skipping
    tmp, root, crates, cache = _crate_from({
        "lib.rs": "mod x;\nmod y;\n#[cfg(test)]\nmod tests;\n",
        "x.rs": """
use super::y::Y;
pub struct X;
impl<'a, T: Fn() -> u8> Clone for Wrap<'a, T> where T: Copy {
    fn clone(&self) -> Self {
        todo!()
    }
}
pub trait Tr {
    fn dflt(&self) -> impl Iterator<Item = u8> {
        std::iter::empty()
    }
    fn decl(&self);
}
""",
        "y.rs": "pub struct Y;\nfn h() -> u8 { let _ = crate::x::X; 'a' as u8 }\n",
        "tests.rs": "use crate::x::X;\n#[test]\nfn t() {\n}\n",
    })
    with tmp:
        out = []
        ok = check_modules(crates, out, False)
        check("cycle found", ok, False)
        check("cycle summary", out[0], "module graph: 4 modules, 3 edges, 1 circle")
        check("cycle members", out[1].strip(), "circle 1 (2 modules): x, y")
        fl = _funcs(crates)
        check("impl/trait names", sorted(fl), ["Tr::dflt", "Wrap::clone", "h", "t"])
        check("Wrap::clone lines", fl.get("Wrap::clone"), 3)
        out = []
        check_functions(root, crates, cache, 2, True, out)
        check("skip tests", out[0], "functions (tests skipped): 3, 2 over 2 lines")

    # a parent that defines what a child uses and re-exports the child: a circle, marked as a
    # re-export; none with --no-reexport-edges
    files = {
        "main.rs": "mod kid;\npub use kid::Kid;\npub struct Shared;\nfn main() {}\n",
        "kid.rs": "use crate::Shared;\npub struct Kid(Shared);\n",
    }
    tmp, root, crates, _ = _crate_from(files)
    with tmp:
        out = []
        check("parent circle", check_modules(crates, out, False), False)
        check("re-export marked", [x.split()[0] for x in out if "[re-export only]" in x],
              ["crate"])
        crates, _ = analyze_src(root, reexport_edges=False)
        check("--no-reexport-edges", check_modules(crates, [], False), True)
        # used by the parent itself: an edge even so
        (root / "main.rs").write_text(files["main.rs"].replace("{}", "{ let _ = Kid; }"))
        crates, _ = analyze_src(root, reexport_edges=False)
        check("re-exported and used", check_modules(crates, [], False), False)

    # folders: sibling folders importing each other through files no two of which make a
    # module circle; a folder and a sibling file; a parent's own file and its children exempt;
    # a test module exempt
    folder_files = {
        "lib.rs": "mod a;\nmod b;\nmod f;\n",
        "a/mod.rs": "mod x;\nmod z;\n",
        "a/x.rs": "pub fn x() { crate::b::y::y(); }\n",
        "a/z.rs": "pub struct Z;\n",
        "b/mod.rs": "pub mod y;\nmod w;\n",
        "b/y.rs": "pub fn y() {}\n",
        "b/w.rs": "pub fn w() { let _ = crate::a::z::Z; }\n",
        "f.rs": "pub fn f() {}\n",
    }
    tmp, root, crates, _ = _crate_from(folder_files)
    with tmp:
        out = []
        check("folder circle: modules fine", check_modules(crates, [], False), True)
        check("folder circle found", check_folders(crates, out), False)
        check("folder circle members", out[1].strip(), "circle in crate: a, b")
    nested = dict(folder_files)
    nested.update({
        "lib.rs": "mod p;\n",
        "p/mod.rs": "mod a;\nmod b;\nmod f;\n",
        "a/mod.rs": None, "a/x.rs": None, "a/z.rs": None, "b/mod.rs": None,
        "b/y.rs": None, "b/w.rs": None, "f.rs": None,
        "p/a/mod.rs": "mod x;\n",
        "p/a/x.rs": "pub fn x() { crate::p::f::f(); }\npub fn x2() {}\n",
        "p/f.rs": "pub fn f() { crate::p::a::x::x2(); }\n",
        "p/b/mod.rs": "mod t;\n",
        "p/b/t.rs": "#[cfg(test)]\nmod tests { fn t() { crate::p::a::x::x(); } }\n",
    })
    tmp, root, crates, _ = _crate_from({k: v for k, v in nested.items() if v is not None})
    with tmp:
        out = []
        check("folder and file circle", check_folders(crates, out), False)
        check("folder and file members", out[1].strip(), "circle in p: a, f")
    parent = {
        "lib.rs": "pub mod s;\n",
        "s/mod.rs": "mod c;\npub mod d;\npub use c::C;\npub struct Top;\n",
        "s/c.rs": "pub struct C(pub super::d::D);\n",
        "s/d/mod.rs": "pub struct D;\nfn f() { let _ = crate::s::Top; }\n",
    }
    tmp, root, crates, _ = _crate_from(parent)
    with tmp:
        check("parent and child exempt", check_folders(crates, []), True)

    if failures:
        print("self-test: FAILED")
        for f in failures:
            print("  " + f)
        return 1
    print("self-test: ok")
    return 0


# --------------------------------------------------------------------------------------------


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", help="crate source folders (default: src/)")
    ap.add_argument("--max-fn-lines", type=int, default=80)
    ap.add_argument("--skip-tests", action="store_true", help="leave test code out of check 2")
    ap.add_argument("--graph", action="store_true", help="print the module dependency graph")
    ap.add_argument("--no-reexport-edges", action="store_true",
                    help="a `pub use` of a name its module does not use itself is not an edge")
    ap.add_argument("--self-test", action="store_true", help="run the script's own tests")
    args = ap.parse_args(argv)
    if args.self_test:
        return self_test()
    paths = [Path(p) for p in args.paths] or [DEFAULT_SRC]
    ok = True
    for src in paths:
        if not src.is_dir():
            print(f"{src}: not a folder", file=sys.stderr)
            return 2
        crates, cache = analyze_src(src, reexport_edges=not args.no_reexport_edges)
        out = []
        if not crates:
            out.append("module graph: no lib.rs or main.rs, skipped")
        else:
            ok &= check_modules(crates, out, args.graph)
            ok &= check_folders(crates, out)
        ok &= check_functions(src, crates, cache, args.max_fn_lines, args.skip_tests, out)
        if len(paths) > 1:
            print(f"[{rel(src)}]")
        print("\n".join(out))
    return 0 if ok else 1


if __name__ == "__main__":
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under `| head`
    sys.exit(main())
