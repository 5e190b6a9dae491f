"""Static gates over a real Python parse tree, and the bundle contract.

Only python3's own `ast` (and its compiler, which executes nothing) is used: comments and
string contents are never looked at (but for `# type:` text, which torch.jit evaluates), and an
attribute named `eval` (`model.eval()`) is not the builtin `eval`. The gate is one layer of
three (the gates, the container, the harness owning data and loss): it refuses the obvious
escapes with a readable message; the container (no network, read-only root, non-root) is what
contains anything that slips through.

Names are judged by what they resolve to where they are used, with Python's own scoping rules
(the compiler's symbol table, reimplemented over the tree and checked against `symtable` in the
tests): a name bound anywhere in a function (assignment, augmented assignment, `for`, `with ...
as`, `except ... as`, `:=`, `import`, `def`, `class`, `del`, match captures, star and tuple
targets, parameters) is local to that whole function; a function sees the names of the
functions around it, never those of a class body around it; a comprehension is its own scope
(its first iterable is evaluated outside it, `:=` binds in the enclosing function); defaults,
decorators, annotations, bases and class keywords are evaluated in the enclosing scope; and
`global`/`nonlocal` move a name where they say.

The rule for the forbidden builtins (FORBIDDEN_NAMES, and getattr/setattr/delattr):

* A *use* of such a name (any load: called or not, in a default, a decorator, a base, an
  iterable, a container, a lambda, `x += ...`) is refused whenever that use can reach the
  builtins namespace. A function local or a variable of an enclosing function (a closure cell)
  cannot, so `def forward(self, input)` is fine. Every other lookup can: a global name in a
  function, any name at module level, and any name a class body binds or takes from the
  globals. A module- or class-level binding never makes a name safe, because a global lookup
  falls back to the builtin whenever the global is not bound at that moment (before the
  binding runs, after `del`, on a path that skipped it, in a function called during import),
  and a class body looks a name up in its own namespace, then the globals, then the builtins
  (`class K: open = open` reads the builtin). So `def open(...)` at module level may be
  written but not called by name: define it inside the function that uses it, or rename it.
* getattr/setattr/delattr are allowed only as the direct callee with a literal attribute
  name, and that name is judged exactly like `obj.name` written out.
* Rebinding is therefore refused at its source: `open = open`, `o = open`, `x = [open]`,
  `lambda: open`, `def f(o=open)`, `class K: open = open`, `for exec in [exec]`, `(o := open)`
  all contain a use of the builtin, and the ones that rebind the same name say so.

Imports and attributes:

* Only allow-listed modules (and the bundle's own) may be imported, and no forbidden
  sub-module, however spelled (`import torch.hub as h`, `from torch import hub`). Importing
  a restricted or forbidden attribute by name is refused (`from torch import load as l`,
  `from torch import from_file`, `from random import _os`), and so is `import *` from anything
  but the bundle's own modules (it would bind names nobody can see).
* Attributes that lead to refused modules, frames, code objects, file readers or writers are
  refused by *name*, whatever the object (FORBIDDEN_ATTRIBUTES, FILE_READERS, `.load`/`.save`
  outside the artifacts dir), so an alias of a module (`import torch as t`, `T = torch`,
  `m = [torch][0]`, a parameter) is judged like the module itself. The tests walk every module
  reachable from the allowed ones to check that no refused module hides under another name.
* What reads an attribute named by text is judged like that attribute written out:
  `getattr(x, "name")`, a class pattern's keywords (`case K(name=v)`), a format field; and
  what would do it with names the gate cannot see is refused (`functools.wraps` with
  assigned/updated, `update_wrapper`, a `pickle_module` given to torch.save/torch.load).
* Dunder names and attributes are refused but for a few that ordinary code needs.
"""

from __future__ import annotations

import ast
import os
import re
import string
import sys
import warnings
from dataclasses import asdict, dataclass
from typing import Iterable

CONTRACT = (("architecture.py", "build_model"), ("training.py", "train"))

# Import allow-list: the production list (math, torch, typing, dataclasses, collections, the
# bundle's own modules) plus a few pure-computation modules. Not `operator` (attrgetter takes
# dotted names), not `string` (Formatter.get_field resolves attributes from text), not numpy
# (its readers: fromfile, load, memmap, ...).
ALLOWED_MODULES = frozenset(
    {
        "__future__",
        "abc",
        "collections",
        "dataclasses",
        "enum",
        "functools",
        "itertools",
        "math",
        "numbers",
        "random",
        "typing",
        "torch",
    }
)

# Sub-modules of allowed packages that load code, read files, spawn processes or fetch.
FORBIDDEN_MODULES = frozenset(
    {
        "torch.hub",
        "torch.utils.cpp_extension",
        "torch.utils.model_zoo",
        "torch.utils.collect_env",
        "torch.utils.data.datapipes",
        "torch.utils.tensorboard",
        "torch.package",
        "torch.multiprocessing",
        "torch.serialization",
        "torch._C",
        # builds Python source from strings (graph targets) and execs it
        "torch.fx",
        # launchers: each starts processes (the kernel refuses them in the bundle's process
        # anyway; the gate names them first). torch.distributed's launcher, elastic agents,
        # run, rpc and pipelines; DataLoader's worker processes; the Xeon launcher; helpers
        # that run tools (hipconfig, valgrind, flamegraph); the compiler stacks of newer
        # torch (torch.compile, dynamo and inductor spawn compiler processes).
        "torch.distributed",
        "torch.utils.data.dataloader",
        "torch.utils.data.DataLoader",
        "torch.backends.xeon",
        "torch.utils.hipify",
        "torch.utils.benchmark",
        "torch.utils.bottleneck",
        "torch.testing._internal",
        "torch.cuda._memory_viz",
        "torch.compile",
        "torch._dynamo",
        "torch._inductor",
    }
)

# Builtins that execute text, read files or hand out namespaces.
FORBIDDEN_NAMES = frozenset(
    {
        "open",
        "eval",
        "exec",
        "compile",
        "__import__",
        "input",
        "globals",
        "locals",
        "vars",
        "breakpoint",
        "help",
        "exit",
        "quit",
        "memoryview",
        "copyright",
        "credits",
        "license",
    }
)
DYNAMIC_ATTRIBUTE_BUILTINS = frozenset({"getattr", "setattr", "delattr"})
# torch.jit evaluates `# type:` comments of scripted functions (torch.jit.annotations): any line
# it would read as one is refused, wherever it stands (torch looks for the text, not a comment).
TYPE_COMMENT = "# type:"
TYPE_IGNORE = re.compile(r"# type:\ ignore(\[[a-zA-Z-]+\])?(?=\n|\Z)")
# Dunder names a bundle may reference: the `if __name__ == "__main__"` idiom and documentation.
ALLOWED_DUNDER_NAMES = frozenset({"__name__", "__doc__", "__file__"})
# Dunder attributes ordinary model code needs (super().__init__(), class names, protocols).
ALLOWED_DUNDER_ATTRIBUTES = frozenset(
    {
        "__init__",
        "__name__",
        "__qualname__",
        "__doc__",
        "__post_init__",
        "__len__",
        "__getitem__",
        "__iter__",
        "__next__",
        "__call__",
        "__enter__",
        "__exit__",
    }
)
# Non-dunder attributes that reach frames, code, modules that escape, or file/library loaders.
FORBIDDEN_ATTRIBUTES = frozenset(
    {
        # frames and code objects
        "f_globals",
        "f_locals",
        "f_back",
        "f_builtins",
        "f_code",
        "tb_frame",
        "tb_next",
        "gi_frame",
        "gi_code",
        "gi_yieldfrom",
        "cr_frame",
        "cr_code",
        "ag_frame",
        "ag_code",
        "co_code",
        "func_globals",
        "func_code",
        # modules reachable as attributes of torch and friends (torch.os, torch.sys, ...)
        "os",
        "sys",
        "subprocess",
        "builtins",
        "importlib",
        "ctypes",
        "socket",
        "shutil",
        "pickle",
        "marshal",
        "multiprocessing",
        "hub",
        "model_zoo",
        "cpp_extension",
        "collect_env",
        "datapipes",
        "serialization",
        "_C",
        # more modules that read files, run code or walk the object graph, wherever reachable
        "io",
        "gc",
        "inspect",
        "traceback",
        "linecache",
        "codecs",
        "mmap",
        "pathlib",
        "Path",
        "tempfile",
        "glob",
        "zipfile",
        "tarfile",
        "runpy",
        "threading",
        "signal",
        "resource",
        "posix",
        "fcntl",
        "urllib",
        "http",
        "ssl",
        # loaders of native code, evaluators of text
        "load_library",
        "get_type_hints",
        "ForwardRef",
        "_eval_type",
        "_evaluate",
        "FileStore",
        "TCPStore",
        # launchers (FORBIDDEN_MODULES), by name whatever the object: `torch.distributed` is
        # imported with torch, so an alias of torch reaches it
        "distributed",
        "dist",  # torch.nn.parallel.distributed.dist and friends
        "elastic_launch",
        "DataLoader",
        "dataloader",
        "xeon",
        "run_cpu",
        "hipify",
        "_memory_viz",
        "_dynamo",
        "_inductor",
        # writers of raw bytes or pickles (a raw pickle in the artifacts dir would be a loader)
        "tofile",
        "dump",
        # storage constructors from files or shared-memory names
        "_new_shared_filename",
        "_new_shared_filename_cpu",
        "_new_shared_fd",
        "_new_shared_fd_cpu",
        "_new_with_file",
        "_set_from_file",
        "_write_file",
        # refused modules reachable under other names from the allowed ones (found by walking
        # them: tests/test_gate_rebinding.py keeps the list honest)
        "bltns",  # enum.bltns is the builtins module
        "_os",  # random._os
        "_sys",  # collections._sys
        "_thread",
        "np",  # torch.storage.np and friends: numpy's readers (load, loadtxt, memmap, ...)
        "numpy",
        "operator",  # typing.operator: attrgetter/methodcaller walk attributes named by text
        "attrgetter",
        "methodcaller",
        "string",  # string.Formatter resolves attributes from text
        "Formatter",
        "types",  # types.CodeType + FunctionType build and run arbitrary bytecode
        "CodeType",
        "FunctionType",
        "gzip",
        "logging",  # logging.FileHandler opens any path
        "FileHandler",
        "platform",  # runs `file` on a path, reads files
        "atexit",
        "python_multiprocessing",
        "package",  # torch.package imports code from archives
        "tensorboard",
        # torch.fx writes graph targets into Python source and execs it
        "fx",
        "call_method",
        "call_module",
        "get_attr",
        "create_node",
        "recompile",
        "quantize_fx",
        "_numeric_suite_fx",
        # library functions that import modules or read attributes named by text
        "_import_dotted_name",  # torch._utils: __import__ of any name
        "lazy_deprecated_import",
        "update_wrapper",  # functools: getattr/setattr of the names in assigned/updated
        "singledispatch",  # .register evaluates string annotations (typing.get_type_hints)
        "singledispatchmethod",
    }
)
# Calls that read files: refused outright.
FILE_READERS = {"from_file": "torch.from_file", "fromfile": "numpy.fromfile"}
# torch calls allowed only on a path built from ctx.artifacts_dir: name -> index of the path arg.
ARTIFACT_CALLS = {
    "torch.load": 0,
    "torch.save": 1,
    "torch.jit.load": 0,
    "torch.jit.save": 1,
}
# The same rule by attribute name, whatever the object: `T = torch; T.load(...)`, a module
# passed as an argument, `torch.jit._serialization.load` are all judged like torch.load.
ARTIFACT_ATTRIBUTES = {"load": 0, "save": 1}
# Module names a bundle file must not take: the harness's own modules (already imported, so an
# `import` of that name would hand the bundle the harness) and everything importable anyway.
# Every `harness_*` name is the harness's too.
HARNESS_MODULES = frozenset(
    {
        "harness_report",
        "harness_gate",
        "harness_stream",
        "harness_probe",
        "harness_runtime",
        "gate",
        "run",
        "trainer",
        "tests",
    }
)
RESERVED_MODULES = HARNESS_MODULES | frozenset(sys.stdlib_module_names) | {"torch", "numpy"}


@dataclass(frozen=True)
class Violation:
    code: str
    path: str
    line: int
    message: str

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def bundle_module_names(paths: Iterable[str]) -> frozenset[str]:
    """Top-level importable names the bundle provides: `a.py` -> a, `pkg/x.py` -> pkg."""
    names = set()
    for path in paths:
        if not path.endswith(".py"):
            continue
        first = path.split("/", 1)[0]
        names.add(first[:-3] if first.endswith(".py") else first)
    return frozenset(n for n in names if n.isidentifier())


def _reserved(top: str) -> bool:
    return top in RESERVED_MODULES or top.startswith("harness_")


def _own_module(module: str, own: frozenset[str]) -> bool:
    top = module.split(".", 1)[0]
    return top in own and not _reserved(top)


def _module_allowed(module: str, own: frozenset[str]) -> bool:
    top = module.split(".", 1)[0]
    for forbidden in FORBIDDEN_MODULES:
        if module == forbidden or module.startswith(forbidden + "."):
            return False
    if _own_module(module, own):
        return True
    return top in ALLOWED_MODULES and (top != "collections" or module in {"collections", "collections.abc"})


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _attribute_problem(name: str) -> str | None:
    if _is_dunder(name):
        return None if name in ALLOWED_DUNDER_ATTRIBUTES else f"attribute {name} is not allowed"
    if name in FORBIDDEN_ATTRIBUTES:
        return f"attribute {name} is not allowed"
    return None


# --- scopes: the compiler's symbol-table analysis (Python/symtable.c), over the tree

GUARDED_NAMES = FORBIDDEN_NAMES | DYNAMIC_ATTRIBUTE_BUILTINS


class _Scope:
    """One block of the symbol table: a module, class body, function, lambda or comprehension."""

    def __init__(self, node: ast.AST, kind: str, parent: "_Scope | None", private: str | None) -> None:
        self.node = node
        self.kind = kind  # "module" | "class" | "function" | "comprehension"
        self.parent = parent
        self.private = private  # the class whose name mangles `__x` here
        self.bound: set[str] = set()  # bound here: assigned, deleted, imported, defined, a parameter
        self.declared_global: set[str] = set()
        self.declared_nonlocal: set[str] = set()

    def resolve(self, name: str) -> str:
        """Where a load of `name` (mangled) in this block looks: "local", "free" (a cell of an
        enclosing function) or "global" (the module's globals, then the builtins).

        A class body's "local" is a lookup in the class namespace, then the globals, then the
        builtins; a module's "local" is its globals, then the builtins.
        """
        if name in self.declared_global:
            return "global"
        if name in self.declared_nonlocal:
            return "free"
        if name in self.bound:
            return "local"
        scope = self.parent
        while scope is not None and scope.kind != "module":
            # Class bodies do not enclose the functions defined in them.
            if scope.kind != "class":
                if name in scope.declared_global:
                    return "global"
                if name in scope.bound or name in scope.declared_nonlocal:
                    return "free"
            scope = scope.parent
        return "global"

    def may_reach_builtins(self, name: str) -> bool:
        """A load of `name` here can end in the builtins namespace."""
        if self.kind == "module":
            return True
        where = self.resolve(name)
        if self.kind == "class":
            return where != "free"
        return where == "global"


def _mangle(private: str | None, name: str) -> str:
    """`__x` inside class K is `_K__x` (the names the gate guards never change)."""
    if not private or not name.startswith("__") or name.endswith("__") or "." in name:
        return name
    stripped = private.lstrip("_")
    return f"_{stripped}{name}" if stripped else name


class _ScopeBuilder:
    """Builds the scopes of a module and records, for every Name, the scope it is evaluated in.

    Names in the scopes are mangled as the compiler mangles them; the guarded names are not
    affected (none starts with two underscores without ending with two).
    """

    def __init__(self) -> None:
        self.scope_of: dict[int, _Scope] = {}
        self.scopes: list[_Scope] = []
        self.module: _Scope | None = None

    def build(self, tree: ast.Module) -> _Scope:
        module = self.module = self.new(tree, "module", None)
        for stmt in tree.body:
            self.visit(stmt, module)
        return module

    def new(self, node: ast.AST, kind: str, parent: _Scope | None) -> _Scope:
        private = node.name if kind == "class" else (parent.private if parent else None)  # type: ignore[attr-defined]
        scope = _Scope(node, kind, parent, private)
        self.scopes.append(scope)
        return scope

    @staticmethod
    def bind(scope: _Scope, name: str) -> None:
        scope.bound.add(_mangle(scope.private, name))

    def visit(self, node: ast.AST, scope: _Scope) -> None:
        method = getattr(self, "visit_" + type(node).__name__, None)
        if method is not None:
            method(node, scope)
        else:
            self.generic(node, scope)

    def generic(self, node: ast.AST, scope: _Scope) -> None:
        for child in ast.iter_child_nodes(node):
            self.visit(child, scope)

    def visit_Name(self, node: ast.Name, scope: _Scope) -> None:
        self.scope_of[id(node)] = scope
        if not isinstance(node.ctx, ast.Load):
            self.bind(scope, node.id)

    def function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, scope: _Scope) -> None:
        # Decorators, defaults and annotations are evaluated where the def statement runs.
        for decorator in getattr(node, "decorator_list", []):
            self.visit(decorator, scope)
        args = node.args
        for default in args.defaults + [d for d in args.kw_defaults if d is not None]:
            self.visit(default, scope)
        parameters = _parameters(args)
        for parameter in parameters:
            if parameter.annotation is not None:
                self.visit(parameter.annotation, scope)
        returns = getattr(node, "returns", None)
        if returns is not None:
            self.visit(returns, scope)
        if not isinstance(node, ast.Lambda):
            self.bind(scope, node.name)
        inner = self.new(node, "function", scope)
        for parameter in parameters:
            self.bind(inner, parameter.arg)
        for stmt in node.body if isinstance(node.body, list) else [node.body]:
            self.visit(stmt, inner)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = function

    def visit_ClassDef(self, node: ast.ClassDef, scope: _Scope) -> None:
        for expr in node.decorator_list + node.bases + [k.value for k in node.keywords]:
            self.visit(expr, scope)
        self.bind(scope, node.name)
        inner = self.new(node, "class", scope)
        for stmt in node.body:
            self.visit(stmt, inner)

    def comprehension(self, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp, scope: _Scope) -> None:
        generators = node.generators
        # The first iterable is evaluated outside, and handed in as the comprehension's argument.
        self.visit(generators[0].iter, scope)
        inner = self.new(node, "comprehension", scope)
        for index, generator in enumerate(generators):
            self.visit(generator.target, inner)
            if index:
                self.visit(generator.iter, inner)
            for condition in generator.ifs:
                self.visit(condition, inner)
        for part in (node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt,):
            self.visit(part, inner)

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = comprehension

    def visit_NamedExpr(self, node: ast.NamedExpr, scope: _Scope) -> None:
        self.visit(node.value, scope)
        target = node.target
        name = _mangle(scope.private, target.id)
        self.scope_of[id(target)] = scope
        owner = scope
        while owner.kind == "comprehension" and owner.parent is not None:
            owner = owner.parent
        if owner is scope:
            scope.bound.add(name)
        elif owner.kind == "function":
            # Bound in the enclosing function; a cell (or its global) seen from the comprehension.
            (scope.declared_global if name in owner.declared_global else scope.declared_nonlocal).add(name)
            owner.bound.add(name)
        elif owner.kind == "module":
            scope.declared_global.add(name)
            owner.declared_global.add(name)
        else:
            owner.bound.add(name)  # in a class body: a SyntaxError the compiler reports

    def visit_AnnAssign(self, node: ast.AnnAssign, scope: _Scope) -> None:
        target = node.target
        if isinstance(target, ast.Name):
            self.scope_of[id(target)] = scope
            # `(x): int` with no value binds nothing; `x: int` does (the name is local).
            if node.simple or node.value is not None:
                self.bind(scope, target.id)
        else:
            self.visit(target, scope)
        self.visit(node.annotation, scope)
        if node.value is not None:
            self.visit(node.value, scope)

    def visit_Global(self, node: ast.Global, scope: _Scope) -> None:
        names = {_mangle(scope.private, n) for n in node.names}
        scope.declared_global.update(names)
        # The compiler marks the module's symbol too: it is global everywhere.
        assert self.module is not None
        self.module.declared_global.update(names)

    def visit_Nonlocal(self, node: ast.Nonlocal, scope: _Scope) -> None:
        scope.declared_nonlocal.update(_mangle(scope.private, n) for n in node.names)

    def visit_Import(self, node: ast.Import, scope: _Scope) -> None:
        for alias in node.names:
            self.bind(scope, alias.asname or alias.name.split(".", 1)[0])

    def visit_ImportFrom(self, node: ast.ImportFrom, scope: _Scope) -> None:
        for alias in node.names:
            if alias.name != "*":  # binds unknown names: only at module level, where every lookup counts
                self.bind(scope, alias.asname or alias.name)

    def visit_ExceptHandler(self, node: ast.ExceptHandler, scope: _Scope) -> None:
        if node.name:
            self.bind(scope, node.name)
        self.generic(node, scope)

    def visit_MatchAs(self, node: ast.MatchAs, scope: _Scope) -> None:
        if node.name:
            self.bind(scope, node.name)
        self.generic(node, scope)

    def visit_MatchStar(self, node: ast.MatchStar, scope: _Scope) -> None:
        if node.name:
            self.bind(scope, node.name)

    def visit_MatchMapping(self, node: ast.MatchMapping, scope: _Scope) -> None:
        if node.rest:
            self.bind(scope, node.rest)
        self.generic(node, scope)


def _parameters(args: ast.arguments) -> list[ast.arg]:
    return args.posonlyargs + args.args + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a is not None]


def _stores(target: ast.AST | None, name: str) -> bool:
    """The target (of an assignment, a for, a with) binds name."""
    return target is not None and any(
        isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load) for n in ast.walk(target)
    )


def _shown(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 60 else text[:57] + "..."


class _Checker(ast.NodeVisitor):
    def __init__(self, path: str, tree: ast.Module, own: frozenset[str]) -> None:
        self.path = path
        self.own = own
        self.violations: list[Violation] = []
        self.aliases: dict[str, str] = {}
        self.parents: dict[int, ast.AST] = {}
        for parent in ast.walk(tree):
            for child in ast.iter_child_nodes(parent):
                self.parents[id(child)] = parent
        builder = _ScopeBuilder()
        self.module_scope = builder.build(tree)
        self.scope_of = builder.scope_of
        # Import aliases, for messages and for names bound to a module's attribute
        # (`from torch import load`). Flow-insensitive: the rules that keep the gate sound judge
        # attributes by name, whatever object they are read from.
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.aliases[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".", 1)[0]
                        self.aliases[top] = top
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                for alias in node.names:
                    if alias.name != "*":
                        self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def add(self, code: str, node: ast.AST, message: str) -> None:
        self.violations.append(Violation(code, self.path, getattr(node, "lineno", 0), message))

    def qualified(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.qualified(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def generic_visit(self, node: ast.AST) -> None:
        if getattr(node, "type_params", None) or type(node).__name__ == "TypeAlias":
            # Python 3.12 annotation scopes: not modelled, so not allowed.
            self.add("forbidden_syntax", node, "type parameter syntax is not allowed")
        super().generic_visit(node)

    # --- imports
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if not _module_allowed(alias.name, self.own):
                self.add("forbidden_import", node, f"import of {alias.name} is not allowed")
            self.check_asname(node, alias)
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level > 0:
            # Relative imports stay inside the bundle's own package.
            module = None
        else:
            module = node.module or ""
            if not _module_allowed(module, self.own):
                self.add("forbidden_import", node, f"import of {module} is not allowed")
                return
        library = module is not None and not _own_module(module, self.own)
        for alias in node.names:
            if alias.name == "*":
                if library:
                    message = f"import * from {module} is not allowed: import names explicitly"
                    self.add("forbidden_import", node, message)
                continue
            full = f"{module}.{alias.name}" if module else alias.name
            if module and not _module_allowed(full, self.own):
                self.add("forbidden_import", node, f"import of {full} is not allowed")
            elif alias.name in FILE_READERS:
                self.add("forbidden_call", node, f"{FILE_READERS[alias.name]} is not allowed")
            elif _is_dunder(alias.name) or alias.name in FORBIDDEN_ATTRIBUTES:
                self.add("forbidden_attribute", node, f"attribute {alias.name} is not allowed")
            elif library and alias.name in ARTIFACT_ATTRIBUTES:
                self.add(
                    "forbidden_import",
                    node,
                    f"import of {full} is not allowed: call {full}(...) on a path under ctx.artifacts_dir",
                )
            self.check_asname(node, alias)
        self.generic_visit(node)

    def check_asname(self, node: ast.AST, alias: ast.alias) -> None:
        if alias.asname and _is_dunder(alias.asname) and alias.asname not in ALLOWED_DUNDER_NAMES:
            self.add("forbidden_name", node, f"import as {alias.asname} is not allowed")

    # --- names
    def scope(self, node: ast.Name) -> _Scope:
        return self.scope_of.get(id(node), self.module_scope)

    def may_be_builtin(self, node: ast.Name) -> bool:
        """A load of this name, where it stands, can be the builtin of that name."""
        return self.scope(node).may_reach_builtins(node.id)

    def rebinds(self, node: ast.Name) -> bool:
        """The use is part of a binding of the same name: `open = open`, `for exec in [exec]`,
        `def f(open=open)`, `(open := open)`, `open += ...`."""
        name = node.id
        child: ast.AST = node
        parent = self.parents.get(id(node))
        while parent is not None:
            if isinstance(parent, ast.NamedExpr) and child is parent.value and parent.target.id == name:
                return True
            if isinstance(parent, ast.comprehension) and child is not parent.target and _stores(parent.target, name):
                return True
            if isinstance(parent, ast.withitem) and _stores(parent.optional_vars, name):
                return True
            if isinstance(parent, ast.arguments):
                return any(p.arg == name for p in _parameters(parent))
            if isinstance(parent, ast.Lambda):
                return False  # the body: a use inside the lambda, bound to nothing here
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                return parent.name == name  # a decorator, base, keyword or annotation
            if isinstance(parent, ast.stmt):
                if isinstance(parent, ast.Assign):
                    return any(_stores(t, name) for t in parent.targets)
                if isinstance(parent, (ast.AnnAssign, ast.AugAssign)):
                    return _stores(parent.target, name)
                if isinstance(parent, (ast.For, ast.AsyncFor)):
                    return child is parent.iter and _stores(parent.target, name)
                return False
            child, parent = parent, self.parents.get(id(parent))
        return False

    def visit_Name(self, node: ast.Name) -> None:
        parent = self.parents.get(id(node))
        called = isinstance(parent, ast.Call) and parent.func is node
        # `open += x` reads the name before it binds it.
        loads = isinstance(node.ctx, ast.Load) or (isinstance(parent, ast.AugAssign) and parent.target is node)
        flagged = False
        if loads and node.id in GUARDED_NAMES and self.may_be_builtin(node):
            if called and node.id in FORBIDDEN_NAMES:
                flagged = True
                self.add("forbidden_name", node, f"call of {node.id} is not allowed{self.shadow_hint(node)}")
            elif not called and self.rebinds(node):
                flagged = True
                self.add("forbidden_name", node, f"rebinding of the builtin {node.id} is not allowed")
            elif node.id in FORBIDDEN_NAMES:
                flagged = True
                self.add("forbidden_name", node, f"use of {node.id} is not allowed{self.shadow_hint(node)}")
            elif not called:
                flagged = True
                self.add("dynamic_attribute", node, f"{node.id} may only be called directly with a literal name")
            # a direct call of getattr/setattr/delattr is judged in visit_Call
        if not flagged and _is_dunder(node.id) and node.id not in ALLOWED_DUNDER_NAMES:
            self.add("forbidden_name", node, f"use of {node.id} is not allowed")
        qualified = self.aliases.get(node.id)
        if qualified and isinstance(node.ctx, ast.Load):
            self.check_qualified(node, qualified, parent)
        self.generic_visit(node)

    def shadow_hint(self, node: ast.Name) -> str:
        """Say why a name the bundle binds at module or class level still counts as the builtin."""
        scope = self.scope(node)
        holders = [self.module_scope] + ([scope] if scope.kind == "class" else [])
        if any(node.id in s.bound for s in holders):
            return f" (the gate takes a module- or class-level {node.id} for the builtin: rename it)"
        return ""

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id in DYNAMIC_ATTRIBUTE_BUILTINS and self.may_be_builtin(func):
            name_arg = node.args[1] if len(node.args) > 1 else None
            if not (isinstance(name_arg, ast.Constant) and isinstance(name_arg.value, str)) or isinstance(
                node.args[0], ast.Starred
            ):
                self.add("dynamic_attribute", node, f"{func.id} with a non-literal attribute name is not allowed")
            else:
                # getattr(x, "name") is x.name: judged by the same rules.
                context = {"getattr": ast.Load, "setattr": ast.Store, "delattr": ast.Del}[func.id]()
                synthetic = ast.copy_location(ast.Attribute(value=node.args[0], attr=name_arg.value, ctx=context), node)
                self.check_attribute(synthetic, node)
        self.generic_visit(node)

    # --- attributes
    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.check_attribute(node, self.parents.get(id(node)))
        self.generic_visit(node)

    def check_attribute(self, node: ast.Attribute, parent: ast.AST | None) -> None:
        problem = _attribute_problem(node.attr)
        if problem:
            self.add("forbidden_attribute", node, problem)
            return
        if node.attr in FILE_READERS:
            qualified = self.qualified(node)
            self.add("forbidden_call", node, f"{qualified or FILE_READERS[node.attr]} is not allowed")
            return
        if not isinstance(node.ctx, ast.Load):
            return
        if node.attr in ("format", "format_map"):
            self.check_format(node)
            return
        if node.attr == "wraps":
            self.check_wraps(node, parent)
            return
        qualified = self.qualified(node)
        if node.attr in ARTIFACT_ATTRIBUTES:
            self.check_artifact_call(node, qualified or _shown(node), ARTIFACT_ATTRIBUTES[node.attr], parent)
            return
        if qualified:
            self.check_qualified(node, qualified, parent)

    def check_format(self, node: ast.Attribute) -> None:
        """str.format resolves `{0.attr}` and `{0[key]}` at run time: an attribute walk no AST
        rule would see (`"{0.__traceback__.tb_frame...}".format(error)`). Plain fields only, and
        only on a literal template (called or not: `f = "{0.x}".format` is the same walk)."""
        template = node.value
        if not (isinstance(template, ast.Constant) and isinstance(template.value, str)):
            # A template held in a variable or attribute could be anything at run time.
            self.add("dynamic_attribute", node, f"{node.attr} with a non-literal template is not allowed")
            return
        try:
            parsed = list(string.Formatter().parse(template.value))
            fields = [f for _text, f, _spec, _conv in parsed if f is not None]
            specs = [spec for _text, _f, spec, _conv in parsed if spec]
        except ValueError:
            return  # an invalid template raises when called; nothing to walk
        for field in fields + [f for spec in specs for _t, f, _s, _c in string.Formatter().parse(spec) if f]:
            if "." in field or "[" in field:
                self.add("dynamic_attribute", node, f"format field {{{field}}} reads attributes or items: not allowed")
                return

    def check_artifact_call(self, node: ast.AST, shown: str, index: int, parent: ast.AST | None) -> None:
        """torch.load/torch.save: called directly, on a path built from ctx.artifacts_dir, with the
        standard pickler (a `pickle_module` of the bundle's would write or read raw pickles)."""
        if not (isinstance(parent, ast.Call) and parent.func is node and _artifacts_path(parent, index)):
            self.add("forbidden_call", node, f"{shown} outside the artifacts dir is not allowed")
        elif (
            len(parent.args) > 2
            or any(isinstance(a, ast.Starred) for a in parent.args)
            or any(k.arg is None or k.arg == "pickle_module" for k in parent.keywords)
        ):
            self.add("forbidden_call", node, f"{shown} takes the path and at most map_location: no pickle_module")

    def check_wraps(self, node: ast.AST, parent: ast.AST | None) -> None:
        """functools.wraps(f, assigned=..., updated=...) reads and writes attributes named by
        text (`__globals__`): only the plain `wraps(f)` is allowed."""
        if not (
            isinstance(parent, ast.Call)
            and parent.func is node
            and len(parent.args) == 1
            and not isinstance(parent.args[0], ast.Starred)
            and not parent.keywords
        ):
            self.add("dynamic_attribute", node, "wraps may only be called with the wrapped function alone")

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        # `case K(attr=x)` reads subject.attr: judged like the attribute written out.
        for name in node.kwd_attrs:
            subject = ast.Name("subject", ast.Load())
            synthetic = ast.copy_location(ast.Attribute(value=subject, attr=name, ctx=ast.Load()), node)
            self.check_attribute(synthetic, None)
        self.generic_visit(node)

    def check_qualified(self, node: ast.AST, qualified: str, parent: ast.AST | None) -> None:
        # Reached through an alias (`from torch import load`) or a dotted chain (`torch.load`).
        if qualified == "functools.wraps":
            self.check_wraps(node, parent)
            return
        for forbidden in FORBIDDEN_MODULES:
            if qualified == forbidden or qualified.startswith(forbidden + "."):
                self.add("forbidden_import", node, f"use of {forbidden} is not allowed")
                return
        if qualified in ARTIFACT_CALLS:
            self.check_artifact_call(node, qualified, ARTIFACT_CALLS[qualified], parent)
        elif qualified.rsplit(".", 1)[-1] in FILE_READERS:
            self.add("forbidden_call", node, f"{qualified} is not allowed")


def _artifacts_path(call: ast.Call, index: int) -> bool:
    """The path argument is built from ctx.artifacts_dir, with no `..` anywhere in it."""
    arg: ast.AST | None = call.args[index] if len(call.args) > index else None
    for keyword in call.keywords:
        if keyword.arg == "f":
            arg = keyword.value
    if arg is None:
        return False
    uses_dir = False
    for sub in ast.walk(arg):
        if isinstance(sub, ast.Attribute) and sub.attr == "artifacts_dir":
            uses_dir = True
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and ".." in sub.value:
            return False
    return uses_dir


def _contract(path: str, tree: ast.Module, function: str) -> list[Violation]:
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == function]
    missing = f"{path} has no top-level function {function}(ctx)"
    if not defs:
        return [Violation("contract_missing_function", path, 0, missing)]
    fn = defs[-1]
    if isinstance(fn, ast.AsyncFunctionDef):
        return [Violation("contract_missing_function", path, fn.lineno, f"{missing}: {function} is async")]
    args = fn.args
    positional = args.posonlyargs + args.args
    required = len(positional) - len(args.defaults)
    required_kw = [a for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is None]
    if (not positional and args.vararg is None) or required > 1 or required_kw:
        return [
            Violation("contract_missing_function", path, fn.lineno, f"{missing}: {function} must take one argument, ctx")
        ]
    body = list(fn.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # docstring
    if all(isinstance(s, ast.Pass) or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)) for s in body):
        return [Violation("contract_missing_function", path, fn.lineno, f"{path}: {function}(ctx) is empty")]
    return []


def check_sources(sources: dict[str, bytes]) -> list[Violation]:
    """All violations of a bundle given as {relative path: bytes}, in path then line order."""
    violations: list[Violation] = []
    own = bundle_module_names(sources)
    trees: dict[str, ast.Module] = {}
    for path in sorted(sources):
        if not path.endswith(".py"):
            continue
        try:
            text = sources[path].decode("utf-8")
        except UnicodeDecodeError as error:
            violations.append(Violation("syntax_error", path, 0, f"{path} is not UTF-8 text ({error.reason})"))
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # SyntaxWarning and friends: not the gate's output
                tree = ast.parse(text, filename=path, type_comments=False)
                # The compiler's own checks too (its symbol table: nonlocal without a binding, a
                # name used before its global declaration, ...): nothing is executed.
                compile(text, path, "exec", dont_inherit=True)
        except SyntaxError as error:
            violations.append(Violation("syntax_error", path, error.lineno or 0, f"{path}: {error.msg}"))
            continue
        except ValueError as error:  # e.g. NUL bytes
            violations.append(Violation("syntax_error", path, 0, f"{path}: {error}"))
            continue
        except (RecursionError, MemoryError):
            violations.append(Violation("syntax_error", path, 0, f"{path}: too deeply nested"))
            continue
        trees[path] = tree
        found = [
            Violation(
                "forbidden_syntax",
                path,
                text.count("\n", 0, m.start()) + 1,
                "type comments are not allowed: torch.jit evaluates them",
            )
            for m in re.finditer(re.escape(TYPE_COMMENT), text)
            if not TYPE_IGNORE.match(text, m.start())
        ]
        try:
            checker = _Checker(path, tree, own)
            checker.visit(tree)
        except RecursionError:
            violations.append(Violation("syntax_error", path, 0, f"{path}: too deeply nested"))
            continue
        violations.extend(sorted(found + checker.violations, key=lambda v: v.line))
    for path, function in CONTRACT:
        if path not in sources:
            violations.append(Violation("contract_missing_file", path, 0, f"bundle has no {path}"))
        elif path in trees:
            violations.extend(_contract(path, trees[path], function))
    return violations


def read_bundle(root: str) -> dict[str, bytes]:
    """Every regular file under root (symbolic links are not followed), by relative path."""
    files: dict[str, bytes] = {}
    for directory, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        for name in sorted(filenames):
            full = os.path.join(directory, name)
            if os.path.islink(full) or not os.path.isfile(full):
                continue
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            with open(full, "rb") as handle:
                files[rel] = handle.read()
    return files


def bundle_root(root: str) -> str:
    """Where the contract files live: the root, or its only directory when a ZIP wrapped them in one."""
    if os.path.isfile(os.path.join(root, "architecture.py")):
        return root
    try:
        entries = [e for e in os.listdir(root) if not e.startswith(".")]
    except OSError:
        return root
    if len(entries) == 1:
        inner = os.path.join(root, entries[0])
        if os.path.isdir(inner) and not os.path.islink(inner):
            return inner
    return root


def gate_report(bundle_dir: str) -> dict[str, object]:
    """The gate's report: ok, file count and violations, for the bundle under bundle_dir."""
    root = bundle_root(bundle_dir)
    sources = read_bundle(root)
    violations = check_sources(sources)
    return {"ok": not violations, "files": len(sources), "violations": [v.to_json() for v in violations]}
