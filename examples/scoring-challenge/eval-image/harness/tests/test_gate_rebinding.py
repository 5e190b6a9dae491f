"""The gate judges a name by what it resolves to where it is used (see harness_gate's docstring).

Each spelling is its own test, generated from the tables below: REFUSED (the violation expected
on the line marked `# <-`), ALLOWED (no violation at all). Then the scope model against the
compiler's own symbol table, the example bundles' outcomes, and a walk of every module
reachable from the allowed ones (torch only: it skips without it).
"""

from __future__ import annotations

import ast
import importlib
import os
import symtable
import textwrap
import types
import unittest
import warnings

import _symtable

import harness_gate

HARNESS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARCH = b"import torch\n\ndef build_model(ctx):\n    return torch.nn.Linear(1, 1)\n"
TAIL = "\n\ndef train(ctx):\n    return ctx.build_model()\n"


def gate(source: str, extra: dict[str, bytes] | None = None) -> list[harness_gate.Violation]:
    sources = {"architecture.py": ARCH, "training.py": (textwrap.dedent(source) + TAIL).encode()}
    sources.update(extra or {})
    return harness_gate.check_sources(sources)


def marked_line(source: str) -> int:
    lines = textwrap.dedent(source).splitlines()
    marked = [i + 1 for i, line in enumerate(lines) if line.rstrip().endswith("# <-")]
    assert len(marked) == 1, f"mark exactly one line with # <-: {source}"
    return marked[0]


# --- refused: (test name, training.py source, code, message); the `# <-` line is where it trips
REFUSED: list[tuple[str, str, str, str]] = [
    # the spellings of the attack review: a module- or class-level binding made the builtin "local"
    ("open_eq_open", "open = open  # <-\n", "forbidden_name", "rebinding of the builtin open is not allowed"),
    ("getattr_eq_getattr", "getattr = getattr  # <-\n", "forbidden_name", "rebinding of the builtin getattr is not allowed"),
    ("import_eq_import", "__import__ = __import__  # <-\n", "forbidden_name", "rebinding of the builtin __import__ is not allowed"),
    ("class_attr_open_eq_open", "class K:\n    open = open  # <-\n", "forbidden_name", "rebinding of the builtin open is not allowed"),
    ("for_exec_in_exec", "for exec in [exec]:  # <-\n    pass\n", "forbidden_name", "rebinding of the builtin exec is not allowed"),
    ("attack_then_call", "open = open\n\ndef train(ctx):\n    return open('/workspace/corpus/holdout.bin')  # <-\n", "forbidden_name", "call of open is not allowed (the gate takes a module- or class-level open for the builtin: rename it)"),
    # rebinding under another name, or inside a value
    ("alias_module_level", "o = open  # <-\n", "forbidden_name", "use of open is not allowed"),
    ("alias_in_function", "def f():\n    o = open  # <-\n    return o\n", "forbidden_name", "use of open is not allowed"),
    ("in_list", "x = [open]  # <-\n", "forbidden_name", "use of open is not allowed"),
    ("in_tuple_unpacking", "o, p = open, print  # <-\n", "forbidden_name", "use of open is not allowed"),
    ("tuple_same_name", "(open, x) = (open, 1)  # <-\n", "forbidden_name", "rebinding of the builtin open is not allowed"),
    ("in_dict", "d = {'k': open}  # <-\n", "forbidden_name", "use of open is not allowed"),
    ("in_set_and_subscript", "s = {open}\nt = (0, eval)[1]  # <-\n", "forbidden_name", "use of eval is not allowed"),
    ("starred_assignment", "a, *b = [0, open]  # <-\n", "forbidden_name", "use of open is not allowed"),
    ("starred_target_same_name", "*open, = [open]  # <-\n", "forbidden_name", "rebinding of the builtin open is not allowed"),
    ("chained_assignment", "a = b = compile  # <-\n", "forbidden_name", "use of compile is not allowed"),
    ("annotated_assignment", "o: object = open  # <-\n", "forbidden_name", "use of open is not allowed"),
    ("augmented_module_level", "open += ''  # <-\n", "forbidden_name", "rebinding of the builtin open is not allowed"),
    ("augmented_global", "def f():\n    global open\n    open += ''  # <-\n", "forbidden_name", "rebinding of the builtin open is not allowed"),
    ("augmented_value", "x = []\nx += [open]  # <-\n", "forbidden_name", "use of open is not allowed"),
    ("lambda_body", "f = (lambda: open)  # <-\n", "forbidden_name", "use of open is not allowed"),
    ("lambda_default", "f = lambda o=open: o  # <-\n", "forbidden_name", "use of open is not allowed"),
    ("lambda_default_same_name", "f = lambda open=open: open  # <-\n", "forbidden_name", "rebinding of the builtin open is not allowed"),
    ("lambda_default_in_function", "def f():\n    return lambda open=open: open  # <-\n", "forbidden_name", "rebinding of the builtin open is not allowed"),
    ("def_default", "def f(o=open):  # <-\n    return o\n", "forbidden_name", "use of open is not allowed"),
    ("def_default_same_name", "def f(open=open):  # <-\n    return open\n", "forbidden_name", "rebinding of the builtin open is not allowed"),
    ("kwonly_default", "def f(*, o=exec):  # <-\n    return o\n", "forbidden_name", "use of exec is not allowed"),
    ("method_default_in_class_body", "class K:\n    def m(self, o=open):  # <-\n        return o\n", "forbidden_name", "use of open is not allowed"),
    ("decorator_partial", "import functools\n\n@functools.partial(open)  # <-\ndef f():\n    pass\n", "forbidden_name", "use of open is not allowed"),
    ("decorator_builtin", "@open  # <-\ndef f():\n    pass\n", "forbidden_name", "use of open is not allowed"),
    ("functools_partial", "import functools\n\nreader = functools.partial(open, '/etc/passwd')  # <-\n", "forbidden_name", "use of open is not allowed"),
    ("map_open", "def f(paths):\n    return list(map(open, paths))  # <-\n", "forbidden_name", "use of open is not allowed"),
    ("reduce_getattr", "import functools\n\ndef f(x):\n    return functools.reduce(getattr, ['a'], x)  # <-\n", "dynamic_attribute", "getattr may only be called directly with a literal name"),
    ("partial_getattr", "import functools\n\ng = functools.partial(getattr, 1)  # <-\n", "dynamic_attribute", "getattr may only be called directly with a literal name"),
    ("class_keyword", "class K(metaclass=type, o=open):  # <-\n    pass\n", "forbidden_name", "use of open is not allowed"),
    ("class_base", "class K(open):  # <-\n    pass\n", "forbidden_name", "use of open is not allowed"),
    ("annotation", "def f(x: open):  # <-\n    return x\n", "forbidden_name", "use of open is not allowed"),
    ("with_target", "def f(cm):\n    with cm(open) as o:  # <-\n        return o\n", "forbidden_name", "use of open is not allowed"),
    ("with_target_same_name", "with open as open:  # <-\n    pass\n", "forbidden_name", "rebinding of the builtin open is not allowed"),
    ("walrus", "def f():\n    return (o := open)  # <-\n", "forbidden_name", "use of open is not allowed"),
    ("walrus_same_name_module", "(open := open)  # <-\n", "forbidden_name", "rebinding of the builtin open is not allowed"),
    ("walrus_in_comprehension", "def f(xs):\n    return [o for x in xs if (o := exec)]  # <-\n", "forbidden_name", "use of exec is not allowed"),
    ("global_in_function", "def f():\n    global open\n    return open  # <-\n", "forbidden_name", "use of open is not allowed"),
    ("global_between_closure", "def outer():\n    open = 1\n    def inner():\n        global open\n        return open('/x')  # <-\n    return inner\n", "forbidden_name", "call of open is not allowed"),
    ("global_in_enclosing_function", "def outer():\n    global open\n    def inner():\n        return open('/x')  # <-\n    return inner\n", "forbidden_name", "call of open is not allowed"),
    ("class_body_does_not_enclose_methods", "class K:\n    def open(self, p):\n        return p\n\n    def f(self):\n        return open('/x')  # <-\n", "forbidden_name", "call of open is not allowed"),
    ("class_local_reads_builtin_not_cell", "def f(open):\n    class K:\n        open = open  # <-\n    return K\n", "forbidden_name", "rebinding of the builtin open is not allowed"),
    ("class_global_declaration", "def f(open):\n    class K:\n        global open\n        x = open  # <-\n    return K\n", "forbidden_name", "use of open is not allowed"),
    ("comprehension_skips_class_scope", "class K:\n    open = 1\n    xs = [open for _ in range(2)]  # <-\n", "forbidden_name", "use of open is not allowed"),
    ("comprehension_first_iterable_is_outside", "def f():\n    return [open for open in [open]]  # <-\n", "forbidden_name", "rebinding of the builtin open is not allowed"),
    ("generator_iterable", "def f():\n    return (line for line in open('/etc/passwd'))  # <-\n", "forbidden_name", "call of open is not allowed"),
    ("nested_comprehension", "def f(xs):\n    return [[y for y in x] for x in [eval]]  # <-\n", "forbidden_name", "use of eval is not allowed"),
    ("dict_comprehension_value", "def f(xs):\n    return {k: exec for k in xs}  # <-\n", "forbidden_name", "use of exec is not allowed"),
    ("non_simple_annotation_binds_nothing", "def f():\n    (open): int\n    return open('/x')  # <-\n", "forbidden_name", "call of open is not allowed"),
    ("module_level_def_is_still_the_builtin", "def open(p):\n    return p\n\ndef g():\n    return open('/x')  # <-\n", "forbidden_name", "call of open is not allowed (the gate takes a module- or class-level open for the builtin: rename it)"),
    ("module_level_def_called_before_it_exists", "def g():\n    return open('/x')  # <-\n\nh = g()\n\ndef open(p):\n    return p\n", "forbidden_name", "call of open is not allowed (the gate takes a module- or class-level open for the builtin: rename it)"),
    ("module_level_getattr_def", "def getattr(o, n):\n    return o\n\ndef g(x, n):\n    return getattr(x, n)  # <-\n", "dynamic_attribute", "getattr with a non-literal attribute name is not allowed"),
    ("module_level_import_as", "import math as open\n\ndef g():\n    return open.sqrt(2)  # <-\n", "forbidden_name", "use of open is not allowed (the gate takes a module- or class-level open for the builtin: rename it)"),
    ("module_level_del", "open = None\ndel open\nopen('/x')  # <-\n", "forbidden_name", "call of open is not allowed (the gate takes a module- or class-level open for the builtin: rename it)"),
    ("module_level_except_as", "try:\n    pass\nexcept Exception as open:\n    pass\nopen('/x')  # <-\n", "forbidden_name", "call of open is not allowed (the gate takes a module- or class-level open for the builtin: rename it)"),
    ("module_level_match_capture", "match 1:\n    case open:\n        open('/x')  # <-\n", "forbidden_name", "call of open is not allowed (the gate takes a module- or class-level open for the builtin: rename it)"),
    ("match_class_pattern", "def f(x):\n    match x:\n        case open():  # <-\n            return 1\n", "forbidden_name", "use of open is not allowed"),
    ("except_clause_type", "def f():\n    try:\n        pass\n    except open:  # <-\n        pass\n", "forbidden_name", "use of open is not allowed"),
    ("star_import_own_module", "from helpers import *\n\ndef g():\n    return open('/x')  # <-\n", "forbidden_name", "call of open is not allowed"),
    ("fstring", "def f():\n    return f\"{open('/etc/passwd').read()}\"  # <-\n", "forbidden_name", "call of open is not allowed"),
    ("isinstance_argument", "def f(x):\n    return isinstance(x, memoryview)  # <-\n", "forbidden_name", "use of memoryview is not allowed"),
    ("type_three_arguments", "K = type('K', (), {'o': open})  # <-\n", "forbidden_name", "use of open is not allowed"),
    ("type_of_builtin", "T = type(open)  # <-\n", "forbidden_name", "use of open is not allowed"),
    ("print_builtin", "def f():\n    print(exec)  # <-\n", "forbidden_name", "use of exec is not allowed"),
    ("breakpoint", "def f():\n    breakpoint()  # <-\n", "forbidden_name", "call of breakpoint is not allowed"),
    ("input_at_module_level", "x = input()  # <-\n", "forbidden_name", "call of input is not allowed"),
    # namespaces
    ("builtins_name", "b = __builtins__  # <-\n", "forbidden_name", "use of __builtins__ is not allowed"),
    ("getattr_builtins", "o = getattr(__builtins__, 'open')  # <-\n", "forbidden_name", "use of __builtins__ is not allowed"),
    ("builtins_subscript", "o = __builtins__['open']  # <-\n", "forbidden_name", "use of __builtins__ is not allowed"),
    ("vars_call", "o = vars()['open']  # <-\n", "forbidden_name", "call of vars is not allowed"),
    ("globals_subscript", "o = globals()['open']  # <-\n", "forbidden_name", "call of globals is not allowed"),
    ("locals_call", "def f():\n    return locals()  # <-\n", "forbidden_name", "call of locals is not allowed"),
    ("import_sys_modules", "import sys  # <-\n", "forbidden_import", "import of sys is not allowed"),
    ("torch_sys_modules", "import torch\n\nb = torch.sys.modules['builtins']  # <-\n", "forbidden_attribute", "attribute sys is not allowed"),
    ("collections_private_sys", "import collections\n\nb = collections._sys.modules['builtins']  # <-\n", "forbidden_attribute", "attribute _sys is not allowed"),
    ("enum_builtins_alias", "import enum\n\nf = enum.bltns.open('/etc/passwd')  # <-\n", "forbidden_attribute", "attribute bltns is not allowed"),
    ("from_enum_import_builtins_alias", "from enum import bltns as b  # <-\n", "forbidden_attribute", "attribute bltns is not allowed"),
    ("random_private_os", "import random\n\nrandom._os.system('id')  # <-\n", "forbidden_attribute", "attribute _os is not allowed"),
    ("from_random_import_private_os", "from random import _os  # <-\n", "forbidden_attribute", "attribute _os is not allowed"),
    ("typing_types_codetype", "import typing\n\nC = typing.types.CodeType  # <-\n", "forbidden_attribute", "attribute types is not allowed"),
    ("typing_operator_attrgetter", "import typing\n\ng = typing.operator.attrgetter('a')  # <-\n", "forbidden_attribute", "attribute operator is not allowed"),
    ("torch_numpy_readers", "import torch\n\na = torch.storage.np.loadtxt('/x')  # <-\n", "forbidden_attribute", "attribute np is not allowed"),
    ("torch_fx_codegen", "import torch\n\ng = torch.fx.Graph()  # <-\n", "forbidden_attribute", "attribute fx is not allowed"),
    ("import_torch_fx", "import torch.fx  # <-\n", "forbidden_import", "import of torch.fx is not allowed"),
    ("fx_graph_call_method", "def f(gm):\n    return gm.graph.call_method('x', ())  # <-\n", "forbidden_attribute", "attribute call_method is not allowed"),
    ("torch_package", "import torch\n\np = torch.package.PackageImporter('/x')  # <-\n", "forbidden_attribute", "attribute package is not allowed"),
    ("dunder_getattribute", "def f(x, n):\n    return object.__getattribute__(x, n)  # <-\n", "forbidden_attribute", "attribute __getattribute__ is not allowed"),
    ("import_as_builtins", "import torch as __builtins__  # <-\n", "forbidden_name", "import as __builtins__ is not allowed"),
    # imports of forbidden things under another name
    ("from_builtins_import_as", "from builtins import open as o  # <-\n", "forbidden_import", "import of builtins is not allowed"),
    ("import_builtins_as", "import builtins as b  # <-\n", "forbidden_import", "import of builtins is not allowed"),
    ("from_torch_import_load_as", "from torch import load as l  # <-\n", "forbidden_import", "import of torch.load is not allowed: call torch.load(...) on a path under ctx.artifacts_dir"),
    ("from_torch_jit_import_save", "from torch.jit import save  # <-\n", "forbidden_import", "import of torch.jit.save is not allowed: call torch.jit.save(...) on a path under ctx.artifacts_dir"),
    ("from_torch_import_from_file_as", "from torch import from_file as ff  # <-\n", "forbidden_call", "torch.from_file is not allowed"),
    ("import_torch_hub_as", "import torch.hub as h  # <-\n", "forbidden_import", "import of torch.hub is not allowed"),
    ("from_torch_serialization_import_load", "from torch.serialization import load  # <-\n", "forbidden_import", "import of torch.serialization is not allowed"),
    ("from_torch_import_serialization_as", "from torch import serialization as s  # <-\n", "forbidden_import", "import of torch.serialization is not allowed"),
    ("from_torch_utils_import_tensorboard", "from torch.utils import tensorboard  # <-\n", "forbidden_import", "import of torch.utils.tensorboard is not allowed"),
    ("star_import_torch", "from torch import *  # <-\n", "forbidden_import", "import * from torch is not allowed: import names explicitly"),
    ("star_import_typing", "from typing import *  # <-\n", "forbidden_import", "import * from typing is not allowed: import names explicitly"),
    # attributes of an alias of a module are the module's
    ("alias_hub", "import torch as t\n\nt.hub.load('x/y', 'z')  # <-\n", "forbidden_attribute", "attribute hub is not allowed"),
    ("alias_load", "import torch as t\n\ns = t.load('/etc/passwd')  # <-\n", "forbidden_call", "torch.load outside the artifacts dir is not allowed"),
    ("assigned_alias_from_file", "import torch\n\nT = torch\nx = T.from_file('/x', size=1)  # <-\n", "forbidden_call", "torch.from_file is not allowed"),
    ("assigned_alias_load", "import torch\n\nT = torch\nx = T.load('/workspace/corpus/holdout.bin')  # <-\n", "forbidden_call", "T.load outside the artifacts dir is not allowed"),
    ("module_in_a_list", "import torch\n\nx = [torch][0].load('/x')  # <-\n", "forbidden_call", "[torch][0].load outside the artifacts dir is not allowed"),
    ("module_as_argument", "def f(m):\n    return m.load('/x')  # <-\n", "forbidden_call", "m.load outside the artifacts dir is not allowed"),
    ("private_serialization_module", "import torch\n\nx = torch.jit._serialization.load('/x')  # <-\n", "forbidden_call", "torch.jit._serialization.load outside the artifacts dir is not allowed"),
    ("load_not_called", "import torch\n\ndef f(ctx):\n    return torch.jit.load  # <-\n", "forbidden_call", "torch.jit.load outside the artifacts dir is not allowed"),
    ("getattr_literal_load", "import torch\n\nl = getattr(torch, 'load')  # <-\n", "forbidden_call", "torch.load outside the artifacts dir is not allowed"),
    ("getattr_literal_hub", "import torch\n\nh = getattr(torch, 'hub')  # <-\n", "forbidden_attribute", "attribute hub is not allowed"),
    ("getattr_literal_from_file", "import torch\n\nf = getattr(torch, 'from_file')  # <-\n", "forbidden_call", "torch.from_file is not allowed"),
    ("getattr_literal_format", "def f(e):\n    return getattr('{0.__globals__}', 'format')(e)  # <-\n", "dynamic_attribute", "format field {0.__globals__} reads attributes or items: not allowed"),
    ("setattr_literal_dunder", "def f(x):\n    setattr(x, '__class__', int)  # <-\n", "forbidden_attribute", "attribute __class__ is not allowed"),
    ("getattr_starred", "def f(args):\n    return getattr(*args)  # <-\n", "dynamic_attribute", "getattr with a non-literal attribute name is not allowed"),
    ("getattr_starred_object", "def f(args):\n    return getattr(*args, 'a')  # <-\n", "dynamic_attribute", "getattr with a non-literal attribute name is not allowed"),
    ("format_not_called", "f = '{0.__globals__}'.format  # <-\n", "dynamic_attribute", "format field {0.__globals__} reads attributes or items: not allowed"),
    # library and language paths that read attributes or evaluate text named by strings
    ("match_class_keyword_attribute", "def f(x):\n    match x:\n        case object(__globals__=g):  # <-\n            return g\n", "forbidden_attribute", "attribute __globals__ is not allowed"),
    ("match_class_keyword_loader", "import torch\n\ndef f():\n    match torch:\n        case object(load=l):  # <-\n            return l\n", "forbidden_call", "subject.load outside the artifacts dir is not allowed"),
    ("update_wrapper", "import functools\n\ndef f(w, g):\n    functools.update_wrapper(w, g, assigned=('__globals__',))  # <-\n", "forbidden_attribute", "attribute update_wrapper is not allowed"),
    ("wraps_with_assigned", "import functools\n\ndef deco(g):\n    @functools.wraps(g, assigned=('__globals__',))  # <-\n    def w():\n        return g()\n    return w\n", "dynamic_attribute", "wraps may only be called with the wrapped function alone"),
    ("wraps_alias_positional", "from functools import wraps\n\ndef deco(g):\n    return wraps(g, ('__globals__',))  # <-\n", "dynamic_attribute", "wraps may only be called with the wrapped function alone"),
    ("singledispatch_evaluates_string_annotations", "import functools\n\n@functools.singledispatch  # <-\ndef f(x):\n    return x\n", "forbidden_attribute", "attribute singledispatch is not allowed"),
    ("type_comment", "def f(x):\n    # type: (int) -> int  # <-\n    return x\n", "forbidden_syntax", "type comments are not allowed: torch.jit evaluates them"),
    ("type_comment_text_in_a_string", "s = 'x # type: (__builtins__) -> int'  # <-\n", "forbidden_syntax", "type comments are not allowed: torch.jit evaluates them"),
    ("torch_import_dotted_name", "import torch\n\nm = torch._utils._import_dotted_name('os')  # <-\n", "forbidden_attribute", "attribute _import_dotted_name is not allowed"),
    ("save_with_pickle_module", "import torch\n\ndef f(ctx, fake):\n    torch.save({}, ctx.artifacts_dir + '/a.pt', fake)  # <-\n", "forbidden_call", "torch.save takes the path and at most map_location: no pickle_module"),
    ("load_with_pickle_module", "import torch\n\ndef f(ctx, fake):\n    return torch.load(ctx.artifacts_dir + '/a.pt', pickle_module=fake)  # <-\n", "forbidden_call", "torch.load takes the path and at most map_location: no pickle_module"),
    ("load_with_kwargs", "import torch\n\ndef f(ctx, kw):\n    return torch.load(ctx.artifacts_dir + '/a.pt', **kw)  # <-\n", "forbidden_call", "torch.load takes the path and at most map_location: no pickle_module"),
    ("fx_recompile", "def f(gm):\n    gm.recompile()  # <-\n", "forbidden_attribute", "attribute recompile is not allowed"),
]

# --- allowed: (test name, training.py source); no violation at all
ALLOWED: list[tuple[str, str]] = [
    ("parameter_named_input", "import torch\n\nclass Net(torch.nn.Module):\n    def forward(self, input):\n        return input * 2\n"),
    ("function_local_def_open", "def f(p):\n    def open(path):\n        return path\n    return open(p)\n"),
    ("closure_over_parameter", "def outer(open):\n    def inner():\n        return open('x')\n    return inner\n"),
    ("class_body_reads_enclosing_cell", "def f(open):\n    class K:\n        x = open\n    return K\n"),
    ("class_nonlocal", "def f():\n    open = 1\n    class K:\n        nonlocal open\n        x = open\n    return K\n"),
    ("nonlocal_then_del", "def outer():\n    open = None\n    def inner():\n        nonlocal open\n        del open\n        return open\n    return inner\n"),
    ("assigned_later_is_local", "def f():\n    x = open\n    open = 1\n    return x\n"),
    ("assigned_on_a_dead_path_is_local", "def f():\n    if False:\n        open = None\n    return open('/etc/passwd')\n"),
    ("self_rebinding_in_function_is_local", "def f():\n    open = open\n    return open\n"),
    ("walrus_same_name_in_function_is_local", "def f():\n    return (open := open)\n"),
    ("for_target_is_local", "def f(xs):\n    for open in xs:\n        pass\n    return open('/x')\n"),
    ("with_target_is_local", "def f(cm):\n    with cm as open:\n        return open('x')\n"),
    ("except_as_is_local", "def f():\n    try:\n        pass\n    except Exception as open:\n        pass\n    return open\n"),
    ("import_as_is_local", "def f():\n    import math as open\n    return open.sqrt(2)\n"),
    ("del_is_local", "def f():\n    open = 1\n    del open\n    return open\n"),
    ("augmented_is_local", "def f(open):\n    open += 1\n    return open\n"),
    ("star_target_is_local", "def f(xs):\n    first, *open = xs\n    return open\n"),
    ("match_capture_is_local", "def f(x):\n    match x:\n        case [open, *exec]:\n            return open, exec\n        case {'k': eval, **compile}:\n            return eval, compile\n    return None\n"),
    ("walrus_in_comprehension_binds_function", "def f(xs):\n    ys = [(open := x) for x in xs]\n    return open, ys\n"),
    ("comprehension_variable", "def f(paths):\n    return [open for open in paths]\n"),
    ("lambda_parameter", "f = lambda open: open('x')\n"),
    ("parameter_kinds", "def f(a, open, /, exec=1, *eval, compile, **vars):\n    return open, exec, eval, compile, vars\n"),
    ("getattr_parameter", "def f(getattr, x, n):\n    return getattr(x, n)\n"),
    ("attributes_named_like_builtins", "def f(model, self):\n    model.eval()\n    self.open('x')\n    model.exec = 1\n    return model.compile, model.input\n"),
    ("method_named_open", "class K:\n    def open(self, p):\n        return p\n\n    def read(self):\n        return self.open('x')\n"),
    ("class_attribute_named_eval", "class K:\n    eval = 1\n\n    def f(self):\n        return self.eval\n"),
    ("own_module_attribute_open", "import helpers\n\ndef g():\n    return helpers.open('x')\n"),
    ("getattr_literal", "def f(model):\n    return getattr(model, 'weight', None)\n"),
    ("artifacts_load_and_save", "import torch\n\ndef f(ctx, model):\n    torch.save(model.state_dict(), ctx.artifacts_dir + '/s.pt')\n    return torch.load(ctx.artifacts_dir + '/s.pt')\n"),
    ("artifacts_load_with_map_location", "import torch\n\ndef f(ctx):\n    a = torch.load(ctx.artifacts_dir + '/s.pt', 'cpu')\n    return a, torch.load(f=ctx.artifacts_dir + '/s.pt', map_location='cpu', weights_only=True)\n"),
    ("aliased_save_in_artifacts", "import torch as t\n\ndef f(ctx, model):\n    T = t\n    T.save(model, f'{ctx.artifacts_dir}/m.pt')\n"),
    # torch.compile itself is refused (it starts compiler processes); the attribute name is not
    ("model_compile_and_eval", "import torch\n\ndef f(model):\n    model.eval()\n    return model.compile(torch.optim)\n"),
    ("literal_format", "names = map('{}-{:.2f}'.format, [1], [2.0])\n"),
    ("own_star_import", "from helpers import *\n"),
    ("dunder_name_idiom", "if __name__ == '__main__':\n    print(__doc__, __file__)\n"),
    ("plain_wraps", "import functools\nfrom functools import wraps\n\ndef deco(g):\n    @functools.wraps(g)\n    def w():\n        return g()\n    @wraps(g)\n    def v():\n        return g()\n    return w, v\n"),
    ("type_ignore_comments", "import torch\n\nx = torch.zeros(1)  # type: ignore\ny = torch.ones(1)  # type: ignore[attr-defined]\n"),
    ("match_class_plain_attributes", "def f(x):\n    match x:\n        case complex(real=r, imag=i):\n            return r, i\n    return None\n"),
]

HELPERS = {"helpers.py": b"def open(path):\n    return path\n"}


class Rebinding(unittest.TestCase):
    """One test per spelling: generated below from REFUSED and ALLOWED."""


def _refused_test(source: str, code: str, message: str):
    def test(self: unittest.TestCase) -> None:
        found = [(v.code, v.message, v.line) for v in gate(source, HELPERS) if v.path == "training.py"]
        expected = (code, message, marked_line(source))
        self.assertIn(expected, found, f"\n{textwrap.dedent(source)}")

    return test


def _allowed_test(source: str):
    def test(self: unittest.TestCase) -> None:
        found = [(v.path, v.line, v.message) for v in gate(source, HELPERS)]
        self.assertEqual(found, [], f"\n{textwrap.dedent(source)}")

    return test


for _name, _source, _code, _message in REFUSED:
    setattr(Rebinding, f"test_refuses_{_name}", _refused_test(_source, _code, _message))
for _name, _source in ALLOWED:
    setattr(Rebinding, f"test_allows_{_name}", _allowed_test(_source))


class Messages(unittest.TestCase):
    def test_violation_carries_file_and_line(self) -> None:
        found = gate("import torch\n\n\nopen = open\n")
        self.assertEqual(
            [v.to_json() for v in found],
            [{"code": "forbidden_name", "path": "training.py", "line": 4, "message": "rebinding of the builtin open is not allowed"}],
        )

    def test_one_violation_per_use(self) -> None:
        # A call of a forbidden builtin is reported once, not as a call and a use.
        found = gate("def f():\n    return open('/x')\n")
        self.assertEqual([(v.code, v.message) for v in found], [("forbidden_name", "call of open is not allowed")])

    def test_symbol_table_errors_are_syntax_errors(self) -> None:
        # ast.parse accepts these; the compiler does not, so the bundle could never run them.
        for source in (
            "def f():\n    def g():\n        nonlocal open\n        return open\n    return g\n",
            "def f():\n    x = open\n    global open\n",
            "class K:\n    xs = [(y := 1) for _ in range(2)]\n",
        ):
            found = gate(source)
            self.assertEqual([v.code for v in found], ["syntax_error"], source)

    def test_pathological_nesting_is_refused_not_a_crash(self) -> None:
        for source in ("x = " + "-" * 100000 + "1\n", "x = a" + ".b" * 100000 + "\n", "x = " + "(" * 300 + ")" * 300 + "\n"):
            found = gate(source)
            self.assertEqual([v.code for v in found], ["syntax_error"])

    def test_type_parameters_are_refused_on_every_python(self) -> None:
        source = "def f[T](x: T) -> T:\n    return x\n"
        found = gate(source)
        try:
            ast.parse(source)
        except SyntaxError:
            # Before 3.12 it does not parse: refused as a syntax error.
            self.assertEqual([v.code for v in found], ["syntax_error"])
            return
        self.assertIn("type parameter syntax is not allowed", [v.message for v in found])


# --- the scope model against the compiler's symbol table

SCOPE_SNIPPETS = [source for _n, source, _c, _m in REFUSED] + [source for _n, source in ALLOWED] + [
    textwrap.dedent(
        """
        x = 1
        def a(p, /, q=x, *r, s, **t):
            global g
            g = p
            def b():
                nonlocal q
                q = 2
                def c():
                    return p, q, r, s, t, g, x, undefined
                return c
            class C:
                p = 3
                y = [p for _ in r]
                def m(self):
                    return p, y
            return b, C
        h = [z for z in range(3) if (w := z)]
        def d():
            ys = [[(v := i) for i in j] for j in []]
            return v
        def e():
            global x
            def f():
                return x
            return f
        def k():
            (ann): int
            bare: int
            return ann, bare
        class D:
            global e2
            e2 = 1
            def m(self):
                return e2
        lam = lambda a, b=x: (a, b, x)
        gen = (i for i in range(3) for j in range(i))
        dct = {k: v for k, v in {}.items()}
        try:
            pass
        except Exception as exc:
            pass
        with open as (o1, [o2, *o3]):
            pass
        match x:
            case [m1, *m2] | {'k': m1, **m2}:
                pass
            case D(m3=m4) as m5:
                pass
        import os.path
        import os.path as op
        from os import path as pp, sep
        del pp
        """
    ),
]


def _symbol_scope(flags: int) -> str:
    scope = (flags >> _symtable.SCOPE_OFF) & _symtable.SCOPE_MASK
    if scope in (_symtable.LOCAL, _symtable.CELL):
        return "local"
    if scope == _symtable.FREE:
        return "free"
    return "global"


def _table_key(node: ast.AST, kind: str) -> tuple[str, str, int]:
    if kind == "module":
        return ("module", "top", 0)
    if kind == "class":
        return ("class", node.name, node.lineno)  # type: ignore[attr-defined]
    names = {ast.ListComp: "listcomp", ast.SetComp: "setcomp", ast.DictComp: "dictcomp", ast.GeneratorExp: "genexpr"}
    name = names.get(type(node)) or ("lambda" if isinstance(node, ast.Lambda) else node.name)  # type: ignore[attr-defined]
    return ("function", name, node.lineno)  # type: ignore[attr-defined]


def compare_with_symtable(source: str, filename: str) -> list[str]:
    """Every symbol the compiler's symbol table lists, classified the same way by the gate's model."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = ast.parse(source)
        top = symtable.symtable(source, filename, "exec")
    builder = harness_gate._ScopeBuilder()
    builder.build(tree)
    ours: dict[tuple[str, str, int], list[harness_gate._Scope]] = {}
    for scope in builder.scopes:
        ours.setdefault(_table_key(scope.node, scope.kind), []).append(scope)
    problems = []
    stack = [top]
    while stack:
        table = stack.pop()
        stack.extend(table.get_children())
        key = ("module", "top", 0) if table.get_type() == "module" else (table.get_type(), table.get_name(), table.get_lineno())
        if table.get_name() == "_annotation" or len(ours.get(key, [])) != 1:
            continue  # postponed annotations, or two same-named blocks on one line: not comparable
        scope = ours[key][0]
        for name, flags in table._table.symbols.items():
            if name.startswith(".") or name == "__class__":
                continue
            expected = _symbol_scope(flags)
            if scope.resolve(name) != expected:
                problems.append(f"{filename}: {key} {name}: gate says {scope.resolve(name)}, compiler says {expected}")
    return problems


class ScopeModel(unittest.TestCase):
    def test_snippets_match_the_symbol_table(self) -> None:
        for index, source in enumerate(SCOPE_SNIPPETS):
            source = textwrap.dedent(source) + TAIL
            try:
                compile(source, "snippet", "exec")
            except SyntaxError:
                continue
            self.assertEqual(compare_with_symtable(source, f"snippet {index}"), [])

    def test_real_modules_match_the_symbol_table(self) -> None:
        stdlib = os.path.dirname(ast.__file__)
        files = [os.path.join(HARNESS, n) for n in sorted(os.listdir(HARNESS)) if n.endswith(".py")]
        files += [
            os.path.join(stdlib, n)
            for n in ("ast.py", "dataclasses.py", "enum.py", "functools.py", "typing.py", "inspect.py", "argparse.py", "symtable.py")
        ]
        files += [os.path.join(stdlib, "collections", "__init__.py")]
        checked = 0
        for path in files:
            if not os.path.isfile(path):
                continue
            with open(path, encoding="utf-8") as handle:
                source = handle.read()
            self.assertEqual(compare_with_symtable(source, path), [])
            checked += 1
        self.assertGreater(checked, 5)


# --- the example bundles keep their outcome

BUNDLES = next(
    (
        p
        for p in (
            os.environ.get("HARNESS_TEST_BUNDLES", ""),
            "/bundles",
            os.path.join(HARNESS, "..", "..", "bundles"),
        )
        if p and os.path.isdir(os.path.join(p, "good"))
    ),
    None,
)


@unittest.skipUnless(BUNDLES, "example bundles not found")
class ExampleBundleGates(unittest.TestCase):
    def test_outcomes(self) -> None:
        for name, ok in (
            ("good", True),
            ("broken", True),
            ("cheat-weights", True),
            ("lookahead", True),
            ("duplicate", True),
            ("malicious", False),
        ):
            report = harness_gate.gate_report(os.path.join(BUNDLES, name))  # type: ignore[arg-type]
            self.assertEqual(report["ok"], ok, f"{name}: {report['violations']}")
        messages = {v["message"] for v in harness_gate.gate_report(os.path.join(BUNDLES, "malicious"))["violations"]}  # type: ignore[union-attr, arg-type]
        self.assertIn("call of open is not allowed", messages)


# --- no refused module hides under another name in the modules a bundle may import

# Modules reachable by attribute from the allowed ones that do no I/O and run no code from text.
HARMLESS_REACHABLE = frozenset(
    {
        "_random",
        "ast",
        "astunparse",
        "bisect",
        "cmath",
        "contextlib",
        "copy",
        "copyreg",
        "dis",
        "json",
        "keyword",
        "posixpath",
        "queue",
        "re",
        "textwrap",
        "time",
        "warnings",
        "weakref",
        # torch's compiled operator namespaces
        "torch._C._fft",
        "torch._C._functions",
        "torch._C._linalg",
        "torch._C._nested",
        "torch._C._onnx",
        "torch._C._return_types",
        "torch._C._sparse",
        "torch._C._special",
        "torch._C.cpp",
        # name mangling helpers (string functions) of torch.package
        "torch.package._mangling",
    }
)


def _importable_torch() -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            importlib.import_module("torch")
    except Exception:
        return False
    return True


@unittest.skipUnless(_importable_torch(), "torch is not importable here")
class ReachableModules(unittest.TestCase):
    def test_refused_modules_are_not_reachable_by_allowed_attribute_names(self) -> None:
        import builtins

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            roots = [importlib.import_module(m) for m in sorted(harness_gate.ALLOWED_MODULES) if m != "__future__"]
        guarded = {id(getattr(builtins, n)): n for n in harness_gate.GUARDED_NAMES if hasattr(builtins, n)}
        queue = [(m.__name__, m) for m in roots]
        seen = {id(m) for m in roots}
        leaks = []
        while queue:
            path, module = queue.pop(0)
            for attr, value in list(vars(module).items()):
                if harness_gate._attribute_problem(attr) or attr in harness_gate.FILE_READERS:
                    continue
                where = f"{path}.{attr}"
                if id(value) in guarded:
                    leaks.append(f"{where} is the builtin {guarded[id(value)]}")
                if not isinstance(value, types.ModuleType):
                    continue
                name = value.__name__
                if harness_gate._module_allowed(name, frozenset()):
                    if id(value) not in seen:
                        seen.add(id(value))
                        queue.append((where, value))
                elif name not in HARMLESS_REACHABLE:
                    leaks.append(f"{where} is the module {name}")
        self.assertGreater(len(seen), 50)
        self.assertEqual(leaks, [])


if __name__ == "__main__":
    unittest.main()
