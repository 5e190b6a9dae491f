"""Static gates over a real Python parse tree, and the bundle contract.

Only python3's own `ast` is used: comments and string contents are never looked at, and an
attribute named `eval` (`model.eval()`) is not the builtin `eval`. The gate is one layer of
three (the gates, the container, the harness owning data and loss): it refuses the obvious
escapes with a readable message; the container (no network, read-only root, non-root) is what
contains anything that slips through.
"""

from __future__ import annotations

import ast
import os
import string
import sys
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
# Module names a bundle file must not take: the harness's own modules (already imported, so an
# `import` of that name would hand the bundle the harness) and everything importable anyway.
HARNESS_MODULES = frozenset(
    {"harness_report", "harness_gate", "harness_stream", "harness_probe", "harness_runtime", "gate", "run", "tests"}
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


def _module_allowed(module: str, own: frozenset[str]) -> bool:
    top = module.split(".", 1)[0]
    for forbidden in FORBIDDEN_MODULES:
        if module == forbidden or module.startswith(forbidden + "."):
            return False
    if top in own and top not in RESERVED_MODULES:
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


class _Checker(ast.NodeVisitor):
    def __init__(self, path: str, tree: ast.Module, own: frozenset[str]) -> None:
        self.path = path
        self.own = own
        self.violations: list[Violation] = []
        self.aliases: dict[str, str] = {}
        self.binding_cache: dict[int, frozenset[str]] = {}
        self.parents: dict[int, ast.AST] = {}
        for parent in ast.walk(tree):
            for child in ast.iter_child_nodes(parent):
                self.parents[id(child)] = parent
        # Flow-insensitive alias map: every import anywhere in the file binds a local name.
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

    # --- imports
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if not _module_allowed(alias.name, self.own):
                self.add("forbidden_import", node, f"import of {alias.name} is not allowed")
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
        for alias in node.names:
            if alias.name == "*":
                continue
            full = f"{module}.{alias.name}" if module else alias.name
            if module and not _module_allowed(full, self.own):
                self.add("forbidden_import", node, f"import of {full} is not allowed")
            elif alias.name in FILE_READERS:
                self.add("forbidden_call", node, f"{FILE_READERS[alias.name]} is not allowed")
            elif _is_dunder(alias.name) or alias.name in FORBIDDEN_ATTRIBUTES:
                self.add("forbidden_attribute", node, f"attribute {alias.name} is not allowed")
        self.generic_visit(node)

    # --- names
    def is_local(self, node: ast.Name) -> bool:
        """The name is bound by the bundle in a scope this reference sees, so it is not the builtin.

        `def forward(self, input)` is everywhere in PyTorch code; `input` there is the argument.
        """
        child: ast.AST = node
        parent = self.parents.get(id(child))
        nearest = True
        while parent is not None:
            if isinstance(parent, _SCOPES):
                if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    # Decorators, defaults and bases are evaluated in the enclosing scope.
                    inside = any(child is stmt for stmt in parent.body)
                elif isinstance(parent, ast.Lambda):
                    inside = child is parent.body
                else:
                    inside = True
                # A class body's names are not visible inside the functions it defines.
                visible = inside and (nearest or not isinstance(parent, ast.ClassDef))
                if visible and node.id in self.bindings(parent):
                    return True
                if inside:
                    nearest = False
            child, parent = parent, self.parents.get(id(parent))
        return False

    def bindings(self, scope: ast.AST) -> frozenset[str]:
        cached = self.binding_cache.get(id(scope))
        if cached is None:
            cached = self.binding_cache[id(scope)] = _bindings(scope)
        return cached

    def visit_Name(self, node: ast.Name) -> None:
        parent = self.parents.get(id(node))
        called = isinstance(parent, ast.Call) and parent.func is node
        if node.id in FORBIDDEN_NAMES | DYNAMIC_ATTRIBUTE_BUILTINS and self.is_local(node):
            pass
        elif node.id in FORBIDDEN_NAMES:
            verb = "call" if called else "use"
            self.add("forbidden_name", node, f"{verb} of {node.id} is not allowed")
        elif _is_dunder(node.id) and node.id not in ALLOWED_DUNDER_NAMES:
            self.add("forbidden_name", node, f"use of {node.id} is not allowed")
        elif node.id in DYNAMIC_ATTRIBUTE_BUILTINS and isinstance(node.ctx, ast.Load):
            if not called:
                self.add("dynamic_attribute", node, f"{node.id} may only be called directly with a literal name")
        qualified = self.aliases.get(node.id)
        if qualified and isinstance(node.ctx, ast.Load):
            self.check_qualified(node, qualified)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("format", "format_map"):
            self.check_format(node)
        if (
            isinstance(node.func, ast.Name)
            and node.func.id in DYNAMIC_ATTRIBUTE_BUILTINS
            and not self.is_local(node.func)
        ):
            name_arg = node.args[1] if len(node.args) > 1 else None
            if not (isinstance(name_arg, ast.Constant) and isinstance(name_arg.value, str)):
                self.add(
                    "dynamic_attribute", node, f"{node.func.id} with a non-literal attribute name is not allowed"
                )
            else:
                problem = _attribute_problem(name_arg.value)
                if problem:
                    self.add("forbidden_attribute", node, problem)
        self.generic_visit(node)

    # --- attributes
    def visit_Attribute(self, node: ast.Attribute) -> None:
        problem = _attribute_problem(node.attr)
        if problem:
            self.add("forbidden_attribute", node, problem)
        elif node.attr in FILE_READERS:
            qualified = self.qualified(node)
            self.add("forbidden_call", node, f"{qualified or FILE_READERS[node.attr]} is not allowed")
        else:
            qualified = self.qualified(node)
            if qualified and isinstance(node.ctx, ast.Load):
                self.check_qualified(node, qualified)
        self.generic_visit(node)

    def check_format(self, node: ast.Call) -> None:
        """str.format resolves `{0.attr}` and `{0[key]}` at run time: an attribute walk no AST
        rule would see (`"{0.__traceback__.tb_frame...}".format(error)`). Plain fields only, and
        only on a literal template."""
        template = node.func.value  # type: ignore[attr-defined]
        if not (isinstance(template, ast.Constant) and isinstance(template.value, str)):
            # A template held in a variable or attribute could be anything at run time.
            self.add("dynamic_attribute", node, f"{node.func.attr} with a non-literal template is not allowed")  # type: ignore[attr-defined]
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

    def check_qualified(self, node: ast.AST, qualified: str) -> None:
        # Reached through an alias (`from torch import load`) or a dotted chain (`torch.load`).
        for forbidden in FORBIDDEN_MODULES:
            if qualified == forbidden or qualified.startswith(forbidden + "."):
                self.add("forbidden_import", node, f"use of {forbidden} is not allowed")
                return
        if qualified in ARTIFACT_CALLS:
            parent = self.parents.get(id(node))
            if not (isinstance(parent, ast.Call) and parent.func is node and _artifacts_path(parent, ARTIFACT_CALLS[qualified])):
                self.add("forbidden_call", node, f"{qualified} outside the artifacts dir is not allowed")
        elif qualified.rsplit(".", 1)[-1] in FILE_READERS:
            self.add("forbidden_call", node, f"{qualified} is not allowed")


_SCOPES = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _bindings(scope: ast.AST) -> frozenset[str]:
    """Names a scope binds itself: arguments, assignment targets, defs, imports (not nested scopes')."""
    names: set[str] = set()
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        a = scope.args
        for arg in a.posonlyargs + a.args + a.kwonlyargs + [x for x in (a.vararg, a.kwarg) if x]:
            names.add(arg.arg)
        roots: list[ast.AST] = list(scope.body) if isinstance(scope.body, list) else [scope.body]
    elif isinstance(scope, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        roots = [g.target for g in scope.generators]
    else:
        roots = list(getattr(scope, "body", []))
    stack = list(roots)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            stack.extend(node.decorator_list)
            continue  # its body is its own scope
        elif isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names.add((alias.asname or alias.name).split(".", 1)[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchAs) and node.name:
            names.add(node.name)
        stack.extend(ast.iter_child_nodes(node))
    return frozenset(names)


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
            tree = ast.parse(text, filename=path, type_comments=False)
        except SyntaxError as error:
            violations.append(Violation("syntax_error", path, error.lineno or 0, f"{path}: {error.msg}"))
            continue
        except ValueError as error:  # e.g. NUL bytes
            violations.append(Violation("syntax_error", path, 0, f"{path}: {error}"))
            continue
        trees[path] = tree
        checker = _Checker(path, tree, own)
        checker.visit(tree)
        violations.extend(sorted(checker.violations, key=lambda v: v.line))
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
