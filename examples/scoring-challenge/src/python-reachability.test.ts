import { describe, expect, it } from "vitest";
import { leastCpuMicros } from "../test/cpu-cost.js";
import { FRAMEWORK_METHODS, reachableCode } from "./python-reachability.js";
import { pythonTokens } from "./python-tokens.js";

/** Python source from an indented template literal (its common indentation removed). */
function py(strings: TemplateStringsArray, ...values: unknown[]): string {
  const text = String.raw({ raw: strings }, ...values).replace(/^\n/, "");
  const lines = text.split("\n");
  const margin = Math.min(
    ...lines.filter((line) => line.trim() !== "").map((line) => line.match(/^ */)![0].length),
  );
  return lines.map((line) => line.slice(margin)).join("\n");
}

/** Each file's reachable code, its tokens joined by spaces. */
function kept(files: Record<string, string>): Record<string, string> {
  const sources = Object.entries(files).map(([path, text]) => ({ path, text }));
  return Object.fromEntries(
    reachableCode(sources).map((file) => [file.path, file.tokens.map((t) => t.text).join(" ")]),
  );
}

const TRAIN = py`
  def train(ctx):
      model = ctx.build_model()
      for batch in ctx.iter_train_batches(model):
          pass
`;

/** A bundle whose training.py is TRAIN, plus `files`. */
const bundle = (architecture: string, files: Record<string, string> = {}) =>
  kept({ "architecture.py": architecture, "training.py": TRAIN, ...files });

describe("reachableCode", () => {
  it("keeps what build_model and train reach, drops functions and classes nothing reaches", () => {
    const code = bundle(py`
      import torch

      SCALE = 2
      UNUSED = [1, 2, 3]

      def helper(x):
          return x * SCALE

      def dead(x):
          return helper(x) + 1

      class Model(torch.nn.Module):
          def forward(self, x):
              return helper(x)

      class Dead(torch.nn.Module):
          pass

      def build_model(ctx):
          return Model()
    `);
    const architecture = code["architecture.py"]!;
    expect(architecture).toContain("import torch");
    expect(architecture).toContain("SCALE = 2");
    expect(architecture).toContain("def helper");
    expect(architecture).toContain("class Model");
    expect(architecture).toContain("def build_model");
    expect(architecture).not.toContain("UNUSED");
    expect(architecture).not.toContain("def dead");
    expect(architecture).not.toContain("class Dead");
    expect(code["training.py"]).toBe(
      pythonTokens(TRAIN)
        .map((t) => t.text)
        .join(" "),
    );
  });

  it("drops a module nothing imports, and the definitions of one imported but unused", () => {
    const helpers = py`
      import torch
      torch.manual_seed(0)

      def pad_one(x):
          return x + 1
    `;
    const alone = bundle("def build_model(ctx):\n    return None\n", { "helpers.py": helpers });
    expect(alone["helpers.py"]).toBe("");
    const imported = bundle("import helpers\n\ndef build_model(ctx):\n    return None\n", {
      "helpers.py": helpers,
    });
    // Importing runs its module-level statements, but nothing calls pad_one.
    expect(imported["helpers.py"]).toBe("import torch torch . manual_seed ( 0 )");
    expect(imported["architecture.py"]).not.toContain("import helpers");
  });

  it("follows `from m import x`, `import m as a` and `a.x` to those names only", () => {
    const helpers = py`
      def used(x):
          return inner(x)

      def inner(x):
          return x

      def other(x):
          return x
    `;
    const fromImport = bundle(
      "from helpers import used\n\ndef build_model(ctx):\n    return used(1)\n",
      { "helpers.py": helpers },
    );
    expect(fromImport["helpers.py"]).toContain("def used");
    expect(fromImport["helpers.py"]).toContain("def inner");
    expect(fromImport["helpers.py"]).not.toContain("def other");
    const attribute = bundle(
      "import helpers as h\n\ndef build_model(ctx):\n    return h.used(1)\n",
      {
        "helpers.py": helpers,
      },
    );
    expect(attribute["helpers.py"]).toContain("def used");
    expect(attribute["helpers.py"]).not.toContain("def other");
    expect(attribute["architecture.py"]).toContain("import helpers as h");
  });

  it("reaches only the imported names that are used, through re-exports and inside functions", () => {
    const code = bundle(
      py`
        def build_model(ctx):
            from reexport import used, unused, h
            return used() + h.deep()
      `,
      {
        "reexport.py": "from helpers import used, unused\nimport helpers as h\n",
        "helpers.py": py`
          def used():
              return 1

          def unused():
              return 2

          def deep():
              return 3

          def other():
              return 4
        `,
      },
    );
    expect(code["helpers.py"]).toContain("def used");
    expect(code["helpers.py"]).toContain("def deep");
    expect(code["helpers.py"]).not.toContain("def unused");
    expect(code["helpers.py"]).not.toContain("def other");
  });

  it("keeps all of a module used as a value (getattr(m, 'x'), passed around)", () => {
    const code = bundle(
      'import helpers\n\ndef build_model(ctx):\n    return getattr(helpers, "other")(1)\n',
      { "helpers.py": "def used(x):\n    return x\n\ndef other(x):\n    return x\n" },
    );
    expect(code["helpers.py"]).toContain("def used");
    expect(code["helpers.py"]).toContain("def other");
  });

  it("resolves packages, namespace packages, submodule attributes and relative imports", () => {
    const code = bundle(
      py`
        import pkg.layers
        from ns.blocks import block

        def build_model(ctx):
            return pkg.layers.layer(block())
      `,
      {
        "pkg/__init__.py": "from .util import VERSION\n",
        "pkg/util.py": "VERSION = 1\nUNUSED = 2\n",
        "pkg/layers.py":
          "from .util import scale\n\ndef layer(x):\n    return scale(x)\n\ndef dead():\n    pass\n",
        "pkg/more.py": "def never():\n    pass\n",
        "ns/blocks.py": "def block():\n    return 1\n\ndef dead_block():\n    pass\n",
      },
    );
    expect(code["pkg/layers.py"]).toContain("def layer");
    expect(code["pkg/layers.py"]).not.toContain("def dead");
    // The relative import reads `scale` from pkg/util.py (which has none: nothing more to keep).
    expect(code["pkg/util.py"]).toBe("");
    expect(code["pkg/__init__.py"]).toBe("");
    expect(code["pkg/more.py"]).toBe("");
    expect(code["ns/blocks.py"]).toBe("def block ( ) : return 1");
  });

  it("follows star imports to the names the importer uses", () => {
    const code = bundle("from helpers import *\n\ndef build_model(ctx):\n    return used()\n", {
      "helpers.py": "def used():\n    return 1\n\ndef other():\n    return 2\n",
    });
    expect(code["helpers.py"]).toBe("def used ( ) : return 1");
    expect(code["architecture.py"]).toContain("from helpers import *");
  });

  it("terminates on import cycles and star-import cycles", () => {
    const code = kept({
      "architecture.py": "from a import *\nimport b\n\ndef build_model(ctx):\n    return f()\n",
      "training.py": TRAIN,
      "a.py": "from b import *\nimport architecture\n\ndef f():\n    return g()\n",
      "b.py": "from a import *\n\ndef g():\n    return 1\n\ndef h():\n    pass\n",
    });
    expect(code["a.py"]).toContain("def f");
    expect(code["b.py"]).toContain("def g");
    expect(code["b.py"]).not.toContain("def h");
  });

  it("tells a function's own variables from module-level names of the same spelling", () => {
    const code = bundle(py`
      def scores(x):
          return x

      def total():
          return 0

      def counter():
          return 0

      def build_model(ctx):
          global counter
          scores = ctx.vocab_size
          for total in range(scores):
              pass
          return counter
    `);
    const architecture = code["architecture.py"]!;
    expect(architecture).not.toContain("def scores");
    expect(architecture).not.toContain("def total");
    expect(architecture).toContain("def counter");
  });

  it("resolves a `nonlocal` name in the enclosing function, not in the one assigning it", () => {
    const source = (declaration: string) => py`
      def build_model(ctx):
          def helper():
              return helper_marker

          def run():
              ${declaration}
              helper = helper
              return helper()

          return run()
    `;
    expect(bundle(source("nonlocal helper"))["architecture.py"]).toContain("helper_marker");
    // Without it, `helper` is run's own variable (Python raises before reading the outer one).
    expect(bundle(source("pass"))["architecture.py"]).not.toContain("helper_marker");
  });

  it("keeps nested functions that are called, even through a closure, and drops the others", () => {
    const code = bundle(py`
      def build_model(ctx):
          def make():
              return helper()

          def helper():
              return 1

          def unused():
              return 2

          return make()
    `);
    expect(code["architecture.py"]).toContain("def make");
    expect(code["architecture.py"]).toContain("def helper");
    expect(code["architecture.py"]).not.toContain("def unused");
  });

  it("drops methods nobody calls; keeps dunders, PyTorch's hooks, attribute and string uses", () => {
    const code = bundle(py`
      import torch

      SEEN = {}

      class Model(torch.nn.Module):
          kind = "model"
          __constants__ = ["width"]
          padding = [1, 2, 3]
          SEEN["model"] = 1

          def __init__(self):
              super().__init__()
              self.mode = self.kind

          def forward(self, x):
              return self.project(x) + getattr(self, "scale")(x)

          def project(self, x):
              return x

          def scale(self, x):
              return x

          def extra_repr(self):
              return "m"

          def unused_method(self, x):
              return x * 3

      def build_model(ctx):
          return Model()
    `);
    const architecture = code["architecture.py"]!;
    for (const name of ["__init__", "forward", "project", "scale", "extra_repr", "kind"]) {
      expect(architecture).toContain(name);
    }
    expect(architecture).toContain("__constants__");
    // A class body that changes something outside the class runs whatever its name.
    expect(architecture).toContain('SEEN [ "model" ] = 1');
    expect(architecture).not.toContain("unused_method");
    expect(architecture).not.toContain("padding");
    expect(FRAMEWORK_METHODS.has("forward")).toBe(true);
  });

  it("keeps class fields named by keyword arguments (a dataclass built by keywords)", () => {
    const code = bundle(py`
      from dataclasses import dataclass

      @dataclass
      class Config:
          width: int = 64
          depth: int = 1
          unused: int = 0

      def build_model(ctx):
          return Config(width=32, depth=2)
    `);
    expect(code["architecture.py"]).toContain("width : int = 64");
    expect(code["architecture.py"]).toContain("depth : int = 1");
    expect(code["architecture.py"]).not.toContain("unused");
  });

  it("drops what follows return, raise, continue and break in the same suite only", () => {
    const code = bundle(py`
      def build_model(ctx):
          for i in range(3):
              if i: continue
              kept_a = i
              break
              dead_a = i
          if ctx:
              return 1
              dead_b = 2
          else:
              kept_b = 3
          return kept_b
          dead_c = 4
    `);
    const architecture = code["architecture.py"]!;
    for (const name of ["kept_a", "kept_b", "continue"]) expect(architecture).toContain(name);
    for (const name of ["dead_a", "dead_b", "dead_c"]) expect(architecture).not.toContain(name);
  });

  it('drops `if __name__ == "__main__":` and `if False:` suites, keeps their else', () => {
    const code = bundle(py`
      def build_model(ctx):
          return None

      def pad():
          return 1

      if __name__ == "__main__":
          pad()
      else:
          mark_else()
      if '__main__' == __name__:
          pad()
      if False:
          pad()
      while 0:
          pad()
      if None:
          pad()
      if __name__ == "architecture":
          mark_live()
    `);
    const architecture = code["architecture.py"]!;
    expect(architecture).not.toContain("pad");
    expect(architecture).toContain("else : mark_else ( )");
    expect(architecture).toContain('if __name__ == "architecture" : mark_live ( )');
  });

  it("keeps definitions under a decorator the bundle binds (a registry may hold them)", () => {
    const code = bundle(py`
      import functools

      MODELS = {}

      def register(cls):
          MODELS[cls.__name__] = cls
          return cls

      @register
      class Registered:
          pass

      @functools.lru_cache(maxsize=None)
      def cached_but_unused():
          return 1

      def build_model(ctx):
          return MODELS["Registered"]()
    `);
    expect(code["architecture.py"]).toContain("class Registered");
    expect(code["architecture.py"]).toContain("def register");
    expect(code["architecture.py"]).not.toContain("cached_but_unused");
  });

  it("keeps code a module-level binding may hold, whatever reads the bound name (or nothing)", () => {
    const code = bundle(py`
      import functools

      MODELS = {}
      _x = MODELS.setdefault("a", ViaSetdefault)
      TABLE = {"b": InDict, "c": [InList]}
      HOOK = lambda ctx: InLambda()
      PAD = [1, 2, 3]

      class ViaSetdefault:
          pass

      class InDict:
          pass

      class InList:
          pass

      class InLambda:
          pass

      @functools.partial(MODELS.setdefault, "d")
      class ViaDecoratorArgument:
          pass

      class Holder:
          kinds = {"e": InClassAttribute}

      class InClassAttribute:
          pass

      class Dead:
          pass

      def build_model(ctx):
          return MODELS["a"]()
    `);
    const architecture = code["architecture.py"]!;
    for (const name of ["ViaSetdefault", "InDict", "InList", "InLambda", "ViaDecoratorArgument"]) {
      expect(architecture).toContain(`class ${name}`);
    }
    expect(architecture).toContain("_x = MODELS . setdefault");
    // Nothing reads Holder: its class attribute holds nothing reachable.
    expect(architecture).not.toContain("class Holder");
    expect(architecture).not.toContain("class InClassAttribute");
    expect(architecture).not.toContain("PAD");
    expect(architecture).not.toContain("class Dead");
  });

  it("keeps module-level writes to a used name, drops writes to an unused one", () => {
    const code = bundle(py`
      TABLE = {}
      TABLE["a"] = 1
      OTHER = {}
      OTHER["b"] = 2

      def build_model(ctx):
          return TABLE
    `);
    expect(code["architecture.py"]).toContain('TABLE [ "a" ] = 1');
    expect(code["architecture.py"]).not.toContain("OTHER");
  });

  it("drops a definition rebound before anything reads it, not one read in between", () => {
    const code = bundle(py`
      def build_model(ctx):
          return shadowed_marker

      def build_model(ctx):
          return helper()

      def helper():
          return first_marker

      alias = helper

      def helper():
          return second_marker
    `);
    const architecture = code["architecture.py"]!;
    expect(architecture).not.toContain("shadowed_marker");
    expect(architecture).toContain("first_marker");
    expect(architecture).toContain("second_marker");
    // An f-string between the two reads the first one too.
    const fString = bundle(py`
      def build_model(ctx):
          return shown()

      def shown():
          return early_marker

      print(f"{shown()}")

      def shown():
          return late_marker
    `)["architecture.py"]!;
    expect(fString).toContain("early_marker");
    expect(fString).toContain("late_marker");
  });

  it("counts names in f-strings and lambdas as uses", () => {
    const code = bundle(py`
      def shown():
          return 1

      def called():
          return 2

      def build_model(ctx):
          label = f"{shown()}"
          return (lambda: called())()
    `);
    expect(code["architecture.py"]).toContain("def shown");
    expect(code["architecture.py"]).toContain("def called");
  });

  it("keeps an entry module whole when it binds no entry point it can see", () => {
    const code = bundle("def helper():\n    return 1\n\nexec_model = None\n");
    expect(code["architecture.py"]).toContain("def helper");
    expect(code["architecture.py"]).toContain("exec_model");
  });

  it("returns every file whole when the bundle has no entry module", () => {
    const files = { "a.py": "def f():\n    return 1\n", "b.py": "x = 1\n" };
    expect(kept(files)).toEqual({ "a.py": "def f ( ) : return 1", "b.py": "x = 1" });
  });

  it("ignores files that are not Python and never throws on garbage", () => {
    expect(kept({ "README.md": "def build_model(ctx):" })).toEqual({});
    const garbage = [
      "def build_model(ctx:\n    return (\n",
      "class\n  def\n    @\n",
      "from . import\nimport\n",
      "def build_model(ctx): return 1\n  unexpected = 1\n",
      `${"if x:\n"
        .repeat(300)
        .split("\n")
        .map((line, i) => " ".repeat(i) + line)
        .join("\n")}pass\n`,
      "x = ) ] }\n\tdef\n\f\r\n",
    ];
    for (const text of garbage) {
      expect(() => kept({ "architecture.py": text, "training.py": text })).not.toThrow();
    }
  });

  it("stays linear: twenty times the definitions take far less than 400 times as long", () => {
    const source = (n: number) =>
      `${Array.from({ length: n }, (_, i) => `def f${i}(x):\n    return f${i + 1}(x)\n`).join("\n")}\ndef build_model(ctx):\n    return f0(1)\n`;
    const cost = (n: number) => {
      const text = source(n);
      return leastCpuMicros(() => {
        const code = kept({ "architecture.py": text, "training.py": TRAIN });
        // Every function is reached through the chain.
        expect(code["architecture.py"]).toContain(`def f${n - 1}`);
      });
    };
    const small = cost(250);
    const large = cost(5_000);
    expect(large / Math.max(small, 500)).toBeLessThan(100);
  });
});
