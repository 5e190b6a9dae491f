"""Static gates and the contract: each rule tripped, and no false positives."""

from __future__ import annotations

import os
import tempfile
import textwrap
import unittest

import harness_gate

ARCH_OK = b"import torch\n\ndef build_model(ctx):\n    return torch.nn.Linear(1, 1)\n"
TRAIN_OK = b"def train(ctx):\n    model = ctx.build_model()\n    for batch in ctx.iter_train_batches(model):\n        pass\n"


def bundle() -> dict[str, bytes]:
    """A bundle with valid contract files."""
    return {"architecture.py": ARCH_OK, "training.py": TRAIN_OK}


def check(text: str, path: str = "training.py") -> list[harness_gate.Violation]:
    sources = {"architecture.py": ARCH_OK, "training.py": TRAIN_OK}
    sources[path] = textwrap.dedent(text).encode()
    return harness_gate.check_sources(sources)


def codes(violations: list[harness_gate.Violation]) -> list[tuple[str, str]]:
    return [(v.code, v.message) for v in violations]


TRAIN_HEAD = "def train(ctx):\n    model = ctx.build_model()\n"


class GateRules(unittest.TestCase):
    def assertTrips(self, text: str, code: str, message: str) -> None:
        found = codes(check(TRAIN_HEAD + textwrap.dedent(text)))
        self.assertIn((code, message), found, f"expected {code}: {message}; got {found}")

    def test_forbidden_imports(self) -> None:
        self.assertTrips("import os\n", "forbidden_import", "import of os is not allowed")
        self.assertTrips("import socket\n", "forbidden_import", "import of socket is not allowed")
        self.assertTrips("import os.path as p\n", "forbidden_import", "import of os.path is not allowed")
        self.assertTrips("from subprocess import run\n", "forbidden_import", "import of subprocess is not allowed")
        self.assertTrips("import importlib\n", "forbidden_import", "import of importlib is not allowed")
        self.assertTrips("import numpy as np\n", "forbidden_import", "import of numpy is not allowed")
        self.assertTrips("import torch.hub\n", "forbidden_import", "import of torch.hub is not allowed")
        self.assertTrips(
            "from torch.utils import cpp_extension\n",
            "forbidden_import",
            "import of torch.utils.cpp_extension is not allowed",
        )
        self.assertTrips("import string\n", "forbidden_import", "import of string is not allowed")
        self.assertTrips("import operator\n", "forbidden_import", "import of operator is not allowed")

    def test_launchers_are_refused(self) -> None:
        # Each starts processes (torch's own subprocess/multiprocessing users, found by reading
        # the installed torch); the bundle's process could not start them anyway (seccomp).
        for text, message in (
            ("from torch.distributed.launcher.api import elastic_launch\n", "import of torch.distributed.launcher.api is not allowed"),
            ("import torch.distributed.run\n", "import of torch.distributed.run is not allowed"),
            ("import torch.distributed.rpc as rpc\n", "import of torch.distributed.rpc is not allowed"),
            ("from torch.distributed.elastic.agent.server import api\n", "import of torch.distributed.elastic.agent.server is not allowed"),
            ("import torch.multiprocessing\n", "import of torch.multiprocessing is not allowed"),
            ("from torch.utils.data import DataLoader\n", "import of torch.utils.data.DataLoader is not allowed"),
            ("import torch.utils.data.dataloader\n", "import of torch.utils.data.dataloader is not allowed"),
            ("import torch.backends.xeon.run_cpu\n", "import of torch.backends.xeon.run_cpu is not allowed"),
            ("import torch.utils.benchmark\n", "import of torch.utils.benchmark is not allowed"),
            ("import torch.utils.hipify\n", "import of torch.utils.hipify is not allowed"),
            ("import torch._dynamo\n", "import of torch._dynamo is not allowed"),
        ):
            self.assertTrips(text, "forbidden_import", message)
        for text, attribute in (
            ("    import torch\n    torch.distributed.is_available()\n", "distributed"),
            ("    import torch as t\n    t.distributed.launcher.api.elastic_launch(None, 'x')\n", "distributed"),
            ("    import torch\n    torch.utils.data.DataLoader([1], num_workers=2)\n", "DataLoader"),
            ("    import torch\n    torch.cuda._memory_viz.trace_plot(None)\n", "_memory_viz"),
            ("    import torch\n    torch.nn.parallel.distributed.dist.init_process_group('gloo')\n", "distributed"),
        ):
            self.assertTrips(text, "forbidden_attribute", f"attribute {attribute} is not allowed")
        self.assertTrips("    import torch\n    m = torch.compile(model)\n", "forbidden_import", "use of torch.compile is not allowed")
        self.assertTrips("    from torch import compile as c\n", "forbidden_import", "import of torch.compile is not allowed")

    def test_forbidden_names(self) -> None:
        self.assertTrips("    eval('1+1')\n", "forbidden_name", "call of eval is not allowed")
        self.assertTrips("    exec('x = 1')\n", "forbidden_name", "call of exec is not allowed")
        self.assertTrips("    open('/proc/self/environ').read()\n", "forbidden_name", "call of open is not allowed")
        self.assertTrips("    __import__('os')\n", "forbidden_name", "call of __import__ is not allowed")
        self.assertTrips("    g = globals()\n", "forbidden_name", "call of globals is not allowed")
        self.assertTrips("    f = compile\n", "forbidden_name", "use of compile is not allowed")
        self.assertTrips("    b = __builtins__\n", "forbidden_name", "use of __builtins__ is not allowed")

    def test_forbidden_attributes(self) -> None:
        self.assertTrips("    g = train.__globals__\n", "forbidden_attribute", "attribute __globals__ is not allowed")
        self.assertTrips(
            "    s = ().__class__.__base__.__subclasses__()\n",
            "forbidden_attribute",
            "attribute __subclasses__ is not allowed",
        )
        self.assertTrips("    import torch\n    torch.os.system('id')\n", "forbidden_attribute", "attribute os is not allowed")
        self.assertTrips("    import torch\n    m = torch.sys.modules\n", "forbidden_attribute", "attribute sys is not allowed")
        self.assertTrips(
            "    try:\n        1 / 0\n    except Exception as e:\n        f = e.__traceback__.tb_frame.f_back.f_globals\n",
            "forbidden_attribute",
            "attribute f_globals is not allowed",
        )
        self.assertTrips(
            "    it = ctx.iter_train_batches(model)\n    s = it.gi_frame\n",
            "forbidden_attribute",
            "attribute gi_frame is not allowed",
        )
        self.assertTrips(
            "    import torch\n    torch.hub.load('x/y', 'z')\n", "forbidden_attribute", "attribute hub is not allowed"
        )
        self.assertTrips(
            "    getattr(model, '__dict__')\n", "forbidden_attribute", "attribute __dict__ is not allowed"
        )

    def test_file_reading_calls(self) -> None:
        self.assertTrips(
            "    import torch\n    state = torch.load('/workspace/corpus/stream.bin')\n",
            "forbidden_call",
            "torch.load outside the artifacts dir is not allowed",
        )
        self.assertTrips(
            "    from torch import load\n    state = load('/etc/passwd')\n",
            "forbidden_call",
            "torch.load outside the artifacts dir is not allowed",
        )
        self.assertTrips(
            "    import torch\n    state = torch.load(ctx.artifacts_dir + '/../../workspace/corpus/holdout.bin')\n",
            "forbidden_call",
            "torch.load outside the artifacts dir is not allowed",
        )
        self.assertTrips(
            "    import torch\n    loader = torch.load\n",
            "forbidden_call",
            "torch.load outside the artifacts dir is not allowed",
        )
        self.assertTrips(
            "    import torch\n    torch.save(model.state_dict(), '/tmp/x.pt')\n",
            "forbidden_call",
            "torch.save outside the artifacts dir is not allowed",
        )
        self.assertTrips(
            "    import torch\n    t = torch.from_file('/workspace/corpus/stream.bin', size=10)\n",
            "forbidden_call",
            "torch.from_file is not allowed",
        )
        self.assertTrips(
            "    import torch\n    s = torch.UntypedStorage.from_file('/x', False, 10)\n",
            "forbidden_call",
            "torch.UntypedStorage.from_file is not allowed",
        )
        self.assertTrips(
            "    a = model.np.fromfile('/workspace/corpus/stream.bin')\n", "forbidden_call", "numpy.fromfile is not allowed"
        )
        self.assertTrips("    import torch.jit\n    m = torch.jit.load('/x')\n", "forbidden_call", "torch.jit.load outside the artifacts dir is not allowed")

    def test_dynamic_attributes(self) -> None:
        self.assertTrips(
            "    name = '__glob' + 'als__'\n    getattr(train, name)\n",
            "dynamic_attribute",
            "getattr with a non-literal attribute name is not allowed",
        )
        self.assertTrips(
            "    setattr(model, 'x' + 'y', 1)\n", "dynamic_attribute", "setattr with a non-literal attribute name is not allowed"
        )
        self.assertTrips(
            "    delattr(model, ctx.name)\n", "dynamic_attribute", "delattr with a non-literal attribute name is not allowed"
        )
        self.assertTrips("    g = getattr\n", "dynamic_attribute", "getattr may only be called directly with a literal name")

    def test_format_strings_cannot_walk_attributes(self) -> None:
        # str.format resolves dotted fields at run time: it would read the harness's frames.
        self.assertTrips(
            "    try:\n        next(iter(ctx.iter_train_batches(None)))\n    except Exception as e:\n"
            "        leak = '{0.__traceback__.tb_frame.f_back.f_locals}'.format(e)\n",
            "dynamic_attribute",
            "format field {0.__traceback__.tb_frame.f_back.f_locals} reads attributes or items: not allowed",
        )
        self.assertTrips("    s = '{x[0]}'.format(x=[1])\n", "dynamic_attribute", "format field {x[0]} reads attributes or items: not allowed")
        self.assertTrips(
            "    template = '{0.x}'\n    s = template.format(model)\n",
            "dynamic_attribute",
            "format with a non-literal template is not allowed",
        )
        self.assertTrips("    s = str.format('{0.x}', model)\n", "dynamic_attribute", "format with a non-literal template is not allowed")
        self.assertEqual(check(TRAIN_HEAD + "    s = '{} {:.3f} {name:>{width}}'.format(1, 2.0, name='a', width=4)\n"), [])

    def test_format_map_cannot_walk_attributes(self) -> None:
        # str.format_map resolves the same dotted fields as str.format, from a mapping.
        self.assertTrips(
            "    leak = '{m.forward.__globals__}'.format_map({'m': model})\n",
            "dynamic_attribute",
            "format field {m.forward.__globals__} reads attributes or items: not allowed",
        )
        self.assertTrips(
            "    template = '{m.x}'\n    s = template.format_map({'m': model})\n",
            "dynamic_attribute",
            "format_map with a non-literal template is not allowed",
        )
        self.assertEqual(check(TRAIN_HEAD + "    s = '{name}: {loss:.3f}'.format_map({'name': 'a', 'loss': 1.0})\n"), [])

    def test_raw_writers_and_object_graph_walkers(self) -> None:
        self.assertTrips("    model.weight.detach().numpy().tofile('/tmp/p')\n", "forbidden_attribute", "attribute tofile is not allowed")
        self.assertTrips("    import torch\n    objs = torch.gc.get_objects()\n", "forbidden_attribute", "attribute gc is not allowed")
        self.assertTrips("    import torch\n    f = torch.inspect.currentframe()\n", "forbidden_attribute", "attribute inspect is not allowed")
        self.assertTrips("    import typing\n    typing._eval_type(x, {}, {})\n", "forbidden_attribute", "attribute _eval_type is not allowed")
        self.assertTrips("    from typing import get_type_hints\n", "forbidden_attribute", "attribute get_type_hints is not allowed")

    def test_syntax_error(self) -> None:
        found = check("def train(ctx):\n    return (\n")
        self.assertEqual([v.code for v in found], ["syntax_error"])
        self.assertEqual(found[0].path, "training.py")
        self.assertGreater(found[0].line, 0)
        bad = harness_gate.check_sources({"architecture.py": b"\xff\xfe", "training.py": TRAIN_OK})
        self.assertEqual([v.code for v in bad], ["syntax_error"])

    def test_violation_carries_path_and_line(self) -> None:
        found = check("\n\nimport os\n" + TRAIN_HEAD + "    pass\n")
        self.assertEqual(found[0].to_json(), {
            "code": "forbidden_import", "path": "training.py", "line": 3, "message": "import of os is not allowed"
        })


class Contract(unittest.TestCase):
    def test_missing_files(self) -> None:
        found = harness_gate.check_sources({"training.py": TRAIN_OK})
        self.assertEqual(codes(found), [("contract_missing_file", "bundle has no architecture.py")])
        found = harness_gate.check_sources({"architecture.py": ARCH_OK})
        self.assertEqual(codes(found), [("contract_missing_file", "bundle has no training.py")])

    def test_missing_function(self) -> None:
        found = check("def build(ctx):\n    return 1\n", path="architecture.py")
        self.assertEqual(
            codes(found), [("contract_missing_function", "architecture.py has no top-level function build_model(ctx)")]
        )
        found = check("def fit(ctx):\n    return 1\n")
        self.assertEqual(codes(found), [("contract_missing_function", "training.py has no top-level function train(ctx)")])

    def test_nested_async_arity_and_empty(self) -> None:
        nested = check("class A:\n    def build_model(ctx):\n        return 1\n", path="architecture.py")
        self.assertEqual([v.code for v in nested], ["contract_missing_function"])
        for text in (
            "async def train(ctx):\n    return 1\n",
            "def train():\n    return 1\n",
            "def train(ctx, other):\n    return 1\n",
            "def train(ctx):\n    '''Nothing.'''\n    pass\n",
        ):
            found = check(text)
            self.assertEqual([v.code for v in found], ["contract_missing_function"], text)
            self.assertIn("train", found[0].message)
        self.assertEqual(check("def train(ctx, steps=3, *, lr=0.1):\n    return steps\n"), [])


class NoFalsePositives(unittest.TestCase):
    def test_comments_strings_and_model_eval(self) -> None:
        text = '''
        """Docstring that says import os, eval(x), open('/etc/passwd') and __globals__."""
        import math
        import torch
        import torch.nn.functional as F
        from torch import nn

        # import socket; exec("rm -rf /"); torch.load('/x'); __import__('os')
        BANNER = "open(...) eval(...) __subclasses__ torch.from_file numpy.fromfile"


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(4, 4)

            def forward(self, input):
                # `input` here is the argument, not the builtin
                return F.relu(self.lin(input)) * math.sqrt(2.0)


        def train(ctx):
            model = ctx.build_model()
            model.eval()
            model.train()
            weight = getattr(model, "weight", None)
            setattr(model, "tag", BANNER)
            torch.save(model.state_dict(), ctx.artifacts_dir + "/state.pt")
            state = torch.load(f"{ctx.artifacts_dir}/state.pt")
            compile_flags = {"eval": 1}
            for batch in ctx.iter_train_batches(model):
                x = batch.tokens.float().mean()
            if __name__ == "__main__":
                print(weight, state, compile_flags, x)
        '''
        self.assertEqual(check(text), [])

    def test_shadowing_is_scoped(self) -> None:
        # A parameter named eval does not make the module-level builtin call acceptable.
        text = TRAIN_HEAD + "    return 1\n\ndef helper(eval):\n    return eval\n\nx = eval('1')\n"
        self.assertIn(("forbidden_name", "call of eval is not allowed"), codes(check(text)))
        # A class attribute named input is not visible inside its methods.
        text = TRAIN_HEAD + "    return 1\n\nclass A:\n    input = 1\n    def f(self):\n        return input()\n"
        self.assertIn(("forbidden_name", "call of input is not allowed"), codes(check(text)))

    def test_own_modules(self) -> None:
        sources = bundle()
        sources["training.py"] = TRAIN_HEAD.encode() + b"    from layers import block\n    import helpers.io as hio\n"
        sources["layers.py"] = b"def block():\n    return 1\n"
        sources["helpers/io.py"] = b"X = 1\n"
        sources["helpers/__init__.py"] = b""
        self.assertEqual(harness_gate.check_sources(sources), [])

    def test_own_module_cannot_take_a_reserved_name(self) -> None:
        sources = bundle()
        sources["training.py"] = TRAIN_HEAD.encode() + b"    import harness_stream\n    import os\n"
        sources["harness_stream.py"] = b"X = 1\n"
        sources["os.py"] = b"X = 1\n"
        found = codes(harness_gate.check_sources(sources))
        self.assertIn(("forbidden_import", "import of harness_stream is not allowed"), found)
        self.assertIn(("forbidden_import", "import of os is not allowed"), found)

    def test_non_python_files_are_not_parsed(self) -> None:
        sources = bundle()
        sources["README.md"] = b"import os\neval(open('x'))\n"
        sources["prism.yaml"] = b"entry: {build: evil}\n"
        self.assertEqual(harness_gate.check_sources(sources), [])


class BundleFiles(unittest.TestCase):
    def test_gate_report_and_wrapped_root(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            inner = os.path.join(tmp, "bundle", "my-bundle")
            os.makedirs(inner)
            for name, data in bundle().items():
                with open(os.path.join(inner, name), "wb") as handle:
                    handle.write(data)
            self.assertEqual(harness_gate.bundle_root(os.path.join(tmp, "bundle")), inner)
            report = harness_gate.gate_report(os.path.join(tmp, "bundle"))
            self.assertEqual(report, {"ok": True, "files": 2, "violations": []})
            with open(os.path.join(inner, "training.py"), "ab") as handle:
                handle.write(b"import socket\n")
            report = harness_gate.gate_report(os.path.join(tmp, "bundle"))
            self.assertFalse(report["ok"])
            self.assertEqual(report["violations"][0]["message"], "import of socket is not allowed")


if __name__ == "__main__":
    unittest.main()
