/**
 * The code of a bundle that can run, for the near-duplicate check: padding a copy with code that
 * never runs (an unused module, unused functions, methods nobody calls, statements after a
 * `return`) must not dilute its similarity to the original.
 *
 * The harness imports `architecture` and `training` and calls `build_model` and `train`; nothing
 * else of a bundle runs unless those reach it. So the pass starts there and follows names, as
 * Python resolves them, to the definitions they reach: a name used in a function is the
 * function's own variable when the function binds it, else the module's (`global` aside); a
 * module-level definition is kept when its name is used; `import m` / `from m import x` of a
 * bundle module load it (its module-level statements run) and `m.x` / `x` reach x there; a class
 * that is kept keeps the methods and class attributes used anywhere by attribute name. Modules
 * never imported, and definitions never reached, are dropped.
 *
 * Which way is safe when Python is dynamic. Keeping code that cannot run only dilutes, which is
 * the attack. Dropping code that can run is not safe either: the original's stored fingerprint
 * would lack it, and a copy restructured so that the pass sees that code (say, a registry lookup
 * turned into a direct call) would differ by all of it. And two bundles that differ only in code
 * the pass wrongly drops would look alike. So wherever the pass cannot tell, it keeps:
 * - every statement that runs at import (module level, class bodies) except definitions;
 * - a definition under a decorator that reads a name bound in the bundle (a registry may keep
 *   it: `@register`, `@functools.partial(MODELS.setdefault, "a")`);
 * - a module- or class-level statement whose right-hand side reads one of the bundle's classes or
 *   functions, or defines a lambda, whatever reads the name it binds: the bound object may hold
 *   that code (`_x = REGISTRY.setdefault(key, Model)`, `MODELS = {"a": Model}`), and a copy
 *   reached only through such a binding must not lose the code it reaches (issue 31);
 * - a module used as a value (`helpers` passed around, `getattr(helpers, "f")`): all of it;
 * - methods and class attributes whose name is used as any attribute, keyword argument or string
 *   anywhere (no types: `x.view` may call any class's `view`), plus dunders and the methods
 *   PyTorch calls by name (`forward`, `extra_repr`, ...);
 * - names in lambdas, comprehensions and f-strings count as uses; a one-line compound statement
 *   and anything the light parse does not understand are kept whole.
 * Dynamic lookups of module-level names by string (`globals()`, `vars()`, `__import__`,
 * `importlib`, `sys.modules`, non-literal `getattr`) are refused by the static gate, so a bundle
 * that is scored cannot reach code any other way.
 *
 * What it drops for certain: definitions and modules nothing reaches, an earlier `def`/`class`
 * rebound by a later one with nothing reading it in between, statements after `return`, `raise`,
 * `continue` or `break` in the same suite, `if __name__ == "__main__":` suites (the harness
 * imports the modules, never runs them) and `if False:`/`if 0:`/`if None:` suites.
 *
 * Where it drops although something could run, on purpose (each is a cheap padding vehicle if
 * kept, and each matters only to a bundle that does real work in an odd place): a module- or
 * class-level assignment nothing reads whose right-hand side reads none of the bundle's
 * definitions (`PAD = [1, 2]`; the side effects of its right-hand side are given up), and a
 * definition under a decorator from outside the bundle that reads none of its names
 * (`@torch.no_grad()`, `@functools.lru_cache`: none of those registers it anywhere the bundle
 * could read back). Padding that runs (or that such a binding keeps) dilutes a copy's token
 * similarity; what it computes does not change, which the behavioural check reads
 * (behaviour-signature.ts).
 *
 * The limit: code that can run but does nothing useful (an opaque `if ctx.vocab_size < 0:`, a
 * helper called and ignored, a method named like an attribute used elsewhere) is kept, and
 * dilutes. Telling useless code from useful code needs running it; this pass does not try.
 */
import {
  assignmentTargets,
  definedName,
  type ImportStatement,
  parseStatements,
  readImport,
  type Statement,
} from "./python-statements.js";
import { isFString, type PythonToken, pythonTokens } from "./python-tokens.js";

/** The modules the harness imports, and the function it calls in each. */
export const ENTRY_POINTS: readonly { module: string; name: string }[] = [
  { module: "architecture", name: "build_model" },
  { module: "training", name: "train" },
];

/**
 * Methods Python's protocols and PyTorch call on a subclass by name, so they run though no
 * bundle code names them (dunders are kept anyway): nn.Module, autograd.Function, Optimizer and
 * LRScheduler hooks, and nn.Module's own methods a subclass may override.
 */
export const FRAMEWORK_METHODS: ReadonlySet<string> = new Set([
  "forward",
  "extra_repr",
  "reset_parameters",
  "_reset_parameters",
  "_init_weights",
  "_conv_forward",
  "flatten_parameters",
  "_load_from_state_dict",
  "_save_to_state_dict",
  "_apply",
  "_get_name",
  "_version",
  "train",
  "eval",
  "state_dict",
  "load_state_dict",
  "parameters",
  "named_parameters",
  "buffers",
  "named_buffers",
  "children",
  "named_children",
  "modules",
  "named_modules",
  "apply",
  "to",
  "zero_grad",
  "backward",
  "setup_context",
  "jvp",
  "vjp",
  "vmap",
  "step",
  "add_param_group",
  "get_lr",
  "_get_closed_form_lr",
]);

/** A file as the pass reads it. */
export interface PythonSource {
  path: string;
  text: string;
}

/** A bundle file's tokens that can run, in source order. */
export interface ReachableFile {
  path: string;
  tokens: PythonToken[];
  /** All of the file's tokens, and a mark (1) on each that can run: `tokens` is those marked. */
  source: PythonToken[];
  kept: Uint8Array;
}

/**
 * The tokens of each `.py` file of a bundle that can run, in the files' order (a file nothing
 * imports has none). A bundle with neither entry module is not one the harness can run: its
 * files are returned whole.
 */
export function reachableCode(files: readonly PythonSource[]): ReachableFile[] {
  const modules = files
    .filter((file) => file.path.endsWith(".py"))
    .map((file) => newModule(file.path, pythonTokens(file.text)));
  const entries = ENTRY_POINTS.flatMap(({ module, name }) =>
    modules.filter((m) => m.name === module).map((m) => ({ module: m, name })),
  );
  if (entries.length === 0) {
    return modules.map((m) => ({
      path: m.path,
      tokens: m.tokens,
      source: m.tokens,
      kept: new Uint8Array(m.tokens.length).fill(1),
    }));
  }
  const pass = new Reachability(modules);
  for (const { module, name } of entries) pass.enter(module, name);
  pass.run();
  return modules.map((m) => ({
    path: m.path,
    tokens: m.tokens.filter((_, i) => m.keep[i] === 1),
    source: m.tokens,
    kept: m.keep,
  }));
}

interface Module {
  /** Dotted module name: `a/b.py` is a.b, `a/__init__.py` is a. */
  name: string;
  path: string;
  tokens: PythonToken[];
  body: Statement[];
  keep: Uint8Array;
  loaded: boolean;
  /** Used as a value somewhere: every module-level definition may be reached. */
  escaped: boolean;
  /**
   * Modules whose names its star imports may bring in (transitively), read once from its
   * module-level `from m import *` statements.
   */
  stars: Set<Module>;
  /** Names it binds at module level: by a definition or assignment, and by an import. */
  binds: Set<string>;
  /** Names it binds by a definition or assignment, or by an import from a bundle module. */
  bundleBinds: Set<string>;
  /**
   * Names that may hold the bundle's code: its module-level `def`/`class` names and names
   * imported from bundle modules. A module-level statement that reads one keeps it reachable.
   */
  definitions: Set<string>;
  /** Where each name occurs (token indices, ascending), built on the first rebinding seen. */
  occurrences: Map<string, number[]> | null;
  scope: Scope;
}

/** A namespace: what it binds, what was used in it, and what waits for a use. */
interface Scope {
  kind: "module" | "function" | "class";
  module: Module;
  parent: Scope | null;
  /** Names it binds (function: parameters, assignments, imports, nested definitions; class: members). */
  locals: Set<string>;
  /** Definitions not kept yet, by the name whose use keeps them. */
  pending: Map<string, (() => void)[]>;
  /** Each used name, with every attribute path read after it (`m.a.b` -> "a.b", bare -> ""). */
  used: Map<string, Set<string>>;
  /** Names bound by an import to a bundle module, or to a name in one (by module and name). */
  links: Map<string, Map<string, Link>>;
}

/** A name bound by an import: to a module itself (`name` null), or to a name defined in it. */
interface Link {
  module: Module;
  name: string | null;
}

function newModule(path: string, tokens: PythonToken[]): Module {
  const parts = path.slice(0, -".py".length).split("/");
  if (parts.length > 1 && parts.at(-1) === "__init__") parts.pop();
  const module: Module = {
    name: parts.join("."),
    path,
    tokens,
    body: parseStatements(tokens),
    keep: new Uint8Array(tokens.length),
    loaded: false,
    escaped: false,
    stars: new Set(),
    binds: new Set(),
    bundleBinds: new Set(),
    definitions: new Set(),
    occurrences: null,
    scope: undefined as unknown as Scope,
  };
  module.scope = newScope("module", module, null);
  return module;
}

function newScope(kind: Scope["kind"], module: Module, parent: Scope | null): Scope {
  return {
    kind,
    module,
    parent,
    locals: new Set(),
    pending: new Map(),
    used: new Map(),
    links: new Map(),
  };
}

const DUNDER = /^__\w+__$/;
// The attribute path of a name read on its own (shared: most names are).
const EMPTY: string[] = [];
const IDENTIFIER = /^[A-Za-z_]\w*$/;
const KEYWORD_ARGUMENT_DEPTH = 1;

class Reachability {
  private readonly byName = new Map<string, Module[]>();
  private readonly kept = new Set<Statement>();
  private readonly attributes = new Set<string>();
  /** Class members not kept yet, by name: any attribute use of that name keeps them. */
  private readonly members = new Map<string, (() => void)[]>();
  private readonly queue: (() => void)[] = [];
  /** The modules that bind each name at module level (where a star import may find it). */
  private readonly binders = new Map<string, Module[]>();

  constructor(files: readonly Module[]) {
    const modules = [...files];
    for (const module of files) {
      const list = this.byName.get(module.name);
      if (list) list.push(module);
      else this.byName.set(module.name, [module]);
    }
    // A directory without __init__.py is still a package (a namespace package, with no code).
    for (const module of files) {
      const parts = module.name.split(".");
      for (let n = 1; n < parts.length; n++) {
        const name = parts.slice(0, n).join(".");
        if (this.byName.has(name)) continue;
        const namespace = newModule(`${name.replaceAll(".", "/")}/__init__.py`, []);
        this.byName.set(name, [namespace]);
        modules.push(namespace);
      }
    }
    // A package's submodules are its attributes once imported: `pkg.sub.f` reaches them.
    for (const module of modules) {
      const dot = module.name.lastIndexOf(".");
      if (dot === -1) continue;
      for (const parent of this.byName.get(module.name.slice(0, dot)) ?? []) {
        this.link(parent.scope, module.name.slice(dot + 1), { module, name: null });
      }
    }
    const direct = new Map<Module, Module[]>();
    for (const module of modules) direct.set(module, this.summarise(module));
    for (const module of modules) {
      for (const name of module.binds) {
        const list = this.binders.get(name);
        if (list) list.push(module);
        else this.binders.set(name, [module]);
      }
      // Star imports of star imports: resolved once here, so a use never walks a chain of them.
      const pending = [...(direct.get(module) ?? [])];
      for (let next = pending.pop(); next; next = pending.pop()) {
        if (next === module || module.stars.has(next)) continue;
        module.stars.add(next);
        pending.push(...(direct.get(next) ?? []));
      }
    }
  }

  /** Read what `module` binds at module level; returns the modules it star-imports. */
  private summarise(module: Module): Module[] {
    const { tokens } = module;
    const stars: Module[] = [];
    for (const statement of moduleLevel(module.body)) {
      if (statement.kind === "def" || statement.kind === "class") {
        const name = definedName(tokens, statement);
        if (name !== null) {
          module.binds.add(name);
          module.bundleBinds.add(name);
          module.definitions.add(name);
        }
      } else if (statement.kind === "import" || statement.kind === "from") {
        const read = readImport(tokens, statement.head, statement.headerEnd);
        if (read === null) continue;
        const fromBundle = this.importedModules(module, read.statement).length > 0;
        for (const { bound } of read.statement.names) {
          if (bound === "*") {
            stars.push(...this.modules(this.absolute(module, read.statement)));
            continue;
          }
          module.binds.add(bound);
          if (fromBundle) {
            module.bundleBinds.add(bound);
            module.definitions.add(bound);
          }
        }
      } else {
        const targets = assignmentTargets(tokens, statement);
        for (const name of [...(targets?.binds ?? []), ...(targets?.changes ?? [])]) {
          module.binds.add(name);
          module.bundleBinds.add(name);
        }
      }
    }
    return stars;
  }

  /** The harness imports `module` and calls `name` in it. */
  enter(module: Module, name: string): void {
    this.load(module);
    this.use(module.scope, name, []);
    // No module-level binding of the entry point (and no star import that may hold it): the
    // light parse missed something, so keep all of the module rather than guess.
    if (!module.binds.has(name) && module.stars.size === 0) this.escape(module);
  }

  run(): void {
    // A worklist, not recursion: a long chain of calls must not overflow the stack.
    for (let next = 0; next < this.queue.length; next++) this.queue[next]!();
    this.queue.length = 0;
  }

  // --- modules

  private load(module: Module): void {
    if (module.loaded) return;
    module.loaded = true;
    // Importing a.b runs package a first.
    const dot = module.name.lastIndexOf(".");
    if (dot !== -1) for (const parent of this.modules(module.name.slice(0, dot))) this.load(parent);
    this.queue.push(() => this.block(module.scope, module.body));
  }

  private modules(name: string): Module[] {
    return this.byName.get(name) ?? [];
  }

  /** Every module-level definition of `module` may be reached (it is used as a value). */
  private escape(module: Module): void {
    if (module.escaped) return;
    module.escaped = true;
    const pending = [...module.scope.pending.values()].flat();
    module.scope.pending.clear();
    for (const keep of pending) this.queue.push(keep);
  }

  // --- statements

  /** The statements of a suite that runs, in `scope`. */
  private block(scope: Scope, statements: readonly Statement[]): void {
    const { tokens } = scope.module;
    for (let i = 0; i < statements.length; i++) {
      const statement = statements[i]!;
      if (neverRuns(tokens, statement)) continue;
      this.statement(scope, statement, statements, i);
      // The rest of the suite after `return`, `raise`, `continue` or `break` never runs.
      if (isTerminator(tokens, statement)) break;
    }
  }

  private statement(
    scope: Scope,
    statement: Statement,
    siblings: readonly Statement[],
    index: number,
  ): void {
    const { module } = scope;
    const { tokens } = module;
    switch (statement.kind) {
      case "def":
      case "class": {
        const name = definedName(tokens, statement);
        if (name === null) {
          this.keepWhole(scope, statement);
          return;
        }
        const keep = () => this.keepDefinition(scope, statement);
        if (this.decoratedByBundle(module, statement)) keep();
        else if (
          scope.kind !== "function" &&
          isShadowed(module, statement, siblings, index, name)
        ) {
          // An earlier definition rebound before anything read it never runs.
        } else this.define(scope, [name], keep);
        return;
      }
      case "import":
      case "from": {
        if (scope.kind === "function") {
          this.keepWhole(scope, statement);
          return;
        }
        // Importing runs the imported module whether or not the name is ever used.
        const read = readImport(tokens, statement.head, statement.headerEnd);
        if (read === null || read.end < statement.headerEnd) {
          this.keepWhole(scope, statement);
          return;
        }
        for (const target of this.importedModules(module, read.statement)) this.load(target);
        const bound = read.statement.names.map((entry) => entry.bound);
        if (bound.includes("*")) this.keepWhole(scope, statement);
        else this.define(scope, bound, () => this.keepWhole(scope, statement));
        return;
      }
      case "compound":
        this.keepRange(scope, statement.start, statement.headerEnd);
        this.block(scope, statement.body);
        return;
      case "simple": {
        // A function's statements all run; at module and class level an assignment is a
        // definition of what it binds (or changes), kept when one of those names is used.
        const targets = scope.kind === "function" ? null : assignmentTargets(tokens, statement);
        if (
          targets === null ||
          (scope.kind === "class" && targets.changes.length > 0) ||
          targets.binds.length + targets.changes.length === 0 ||
          // `_x = REGISTRY.setdefault(key, Model)`, `MODELS = {"a": Model}`: the bound object may
          // hold the bundle's code, and whatever reads it (a registry, a lookup) reaches that code.
          readsDefinition(module, statement.head, statement.headerEnd)
        ) {
          this.keepWhole(scope, statement);
        } else {
          this.define(scope, [...targets.binds, ...targets.changes], () =>
            this.keepWhole(scope, statement),
          );
        }
        return;
      }
    }
  }

  /** Register a definition of `names` in `scope`: kept now if one is used, else when one is. */
  private define(scope: Scope, names: readonly string[], keep: () => void): void {
    let once = false;
    const keepOnce = () => {
      if (once) return;
      once = true;
      keep();
    };
    const usedNow = names.some(
      (name) =>
        scope.used.has(name) ||
        DUNDER.test(name) ||
        (scope.kind === "module" && scope.module.escaped) ||
        (scope.kind === "class" && (this.attributes.has(name) || FRAMEWORK_METHODS.has(name))),
    );
    if (usedNow) {
      this.queue.push(keepOnce);
      return;
    }
    for (const name of names) {
      const list = scope.pending.get(name);
      if (list) list.push(keepOnce);
      else scope.pending.set(name, [keepOnce]);
      if (scope.kind === "class") {
        const members = this.members.get(name);
        if (members) members.push(keepOnce);
        else this.members.set(name, [keepOnce]);
      }
    }
  }

  private keepWhole(scope: Scope, statement: Statement): void {
    if (this.kept.has(statement)) return;
    this.kept.add(statement);
    this.keepRange(scope, statement.start, statement.end);
  }

  private keepRange(scope: Scope, from: number, to: number, skip?: ReadonlySet<number>): void {
    scope.module.keep.fill(1, from, to);
    this.scan(scope, from, to, skip);
  }

  /** A `def` or `class` that is reached: its header, then its body in its own scope. */
  private keepDefinition(scope: Scope, statement: Statement): void {
    if (this.kept.has(statement)) return;
    this.kept.add(statement);
    const { tokens } = scope.module;
    const isClass = statement.kind === "class";
    const inner = newScope(isClass ? "class" : "function", scope.module, scope);
    const header = readHeader(tokens, statement);
    scope.module.keep.fill(1, statement.start, statement.headerEnd);
    // Decorators, defaults, annotations and bases run in the enclosing scope; the parameters
    // are the function's own; a one-line body runs inside.
    this.scan(scope, statement.start, header.colon, header.bindings);
    inner.locals = bindingsOf(tokens, statement, header, isClass);
    this.scan(inner, header.colon + 1, statement.headerEnd);
    this.block(inner, statement.body);
  }

  /**
   * Whether a decorator of `statement` reads a name the bundle binds, anywhere in its expression
   * (`@register`, `@REGISTRY.register("a")`, `@functools.partial(MODELS.setdefault, "a")`): it
   * may register the definition somewhere the bundle reads back.
   */
  private decoratedByBundle(module: Module, statement: Statement): boolean {
    const { tokens } = module;
    for (let i = statement.start; i < statement.head; i++) {
      const token = tokens[i]!;
      if (token.kind !== "name" || tokens[i - 1]?.text === ".") continue;
      if (module.bundleBinds.has(token.text)) return true;
    }
    return false;
  }

  // --- names

  /**
   * Record the uses in tokens [from, to) as `scope` sees them. Names follow Python's scoping;
   * attribute names are uses of any class member of that name; import statements bind.
   */
  private scan(scope: Scope, from: number, to: number, skip?: ReadonlySet<number>): void {
    const { tokens } = scope.module;
    let depth = 0;
    for (let i = from; i < to; i++) {
      if (skip?.has(i)) continue;
      const token = tokens[i]!;
      if (token.kind === "op") {
        if (token.text === "(" || token.text === "[" || token.text === "{") depth++;
        else if (token.text === ")" || token.text === "]" || token.text === "}") depth--;
        continue;
      }
      if (token.kind === "string") {
        this.stringUses(scope, token.text);
        continue;
      }
      if (token.kind === "keyword") {
        if ((token.text === "import" || token.text === "from") && startsStatement(tokens, i)) {
          const read = readImport(tokens, i, to);
          if (read !== null) {
            this.bindImport(scope, read.statement);
            i = read.end - 1;
          }
        } else if (
          (token.text === "def" || token.text === "class") &&
          tokens[i + 1]?.kind === "name"
        ) {
          i++; // a definition's own name is not a use
        }
        continue;
      }
      if (token.kind !== "name") continue;
      const previous = i > 0 ? tokens[i - 1] : undefined;
      if (previous?.kind === "op" && previous.text === ".") {
        this.useAttribute(token.text);
        continue;
      }
      const next = tokens[i + 1];
      if (depth >= KEYWORD_ARGUMENT_DEPTH && next?.kind === "op" && next.text === "=") {
        // `f(width=3)`: a parameter's or a dataclass field's name, not a variable.
        this.useAttribute(token.text);
        continue;
      }
      let path: string[] = EMPTY;
      for (let j = i + 1; j + 1 < to; j += 2) {
        const dot = tokens[j]!;
        const attribute = tokens[j + 1]!;
        if (dot.kind !== "op" || dot.text !== "." || attribute.kind !== "name") break;
        if (path === EMPTY) path = [];
        path.push(attribute.text);
      }
      this.use(scope, token.text, path);
    }
  }

  /** A string may name an attribute (`getattr(self, "proj")`); an f-string holds code. */
  private stringUses(scope: Scope, text: string): void {
    if (isFString(text)) {
      for (const word of fStringNames(text)) {
        this.use(scope, word, EMPTY);
        this.useAttribute(word);
      }
      return;
    }
    const parts = stringBody(text).split(".");
    if (parts.every((part) => IDENTIFIER.test(part))) {
      for (const part of parts) this.useAttribute(part);
    }
  }

  private useAttribute(name: string): void {
    if (this.attributes.has(name)) return;
    this.attributes.add(name);
    const waiting = this.members.get(name);
    if (!waiting) return;
    this.members.delete(name);
    for (const keep of waiting) this.queue.push(keep);
  }

  /** `name` (then `.a.b` for `path` [a, b]) is read in `scope`. */
  private use(scope: Scope, name: string, path: readonly string[]): void {
    const target = resolve(scope, name);
    const key = path.join(".");
    let paths = target.used.get(name);
    if (paths?.has(key)) return;
    if (!paths) {
      paths = new Set();
      target.used.set(name, paths);
      const waiting = target.pending.get(name);
      if (waiting) {
        target.pending.delete(name);
        for (const keep of waiting) this.queue.push(keep);
      }
    }
    paths.add(key);
    for (const link of target.links.get(name)?.values() ?? []) this.follow(link, path);
    // A name a star import may have brought in: the modules that bind it (not every module
    // on the way, so a ring of star imports costs one step per binder).
    const { stars } = target.module;
    if (target.kind === "module" && stars.size > 0) {
      for (const binder of this.binders.get(name) ?? []) {
        if (!stars.has(binder)) continue;
        this.load(binder);
        this.use(binder.scope, name, path);
      }
    }
  }

  private follow(link: Link, path: readonly string[]): void {
    if (link.name !== null) {
      this.use(link.module.scope, link.name, path);
      return;
    }
    this.load(link.module);
    if (path.length === 0) this.escape(link.module);
    else this.use(link.module.scope, path[0]!, path.slice(1));
  }

  private link(scope: Scope, name: string, link: Link): void {
    // Keyed, so that the same import kept many times follows each use once.
    const key = `${link.module.path}\u0000${link.name ?? ""}`;
    let links = scope.links.get(name);
    if (links?.has(key)) return;
    if (!links) {
      links = new Map();
      scope.links.set(name, links);
    }
    links.set(key, link);
    for (const key of scope.used.get(name) ?? []) {
      this.follow(link, key === "" ? [] : key.split("."));
    }
  }

  // --- imports

  /** An import that runs in `scope`: load what it names and bind its names there. */
  private bindImport(scope: Scope, statement: ImportStatement): void {
    const { module } = scope;
    const targets = this.importedModules(module, statement);
    for (const target of targets) this.load(target);
    if (statement.from === null) {
      for (const { name, bound, renamed } of statement.names) {
        const linked = renamed ? name : name.split(".")[0]!;
        for (const target of this.modules(linked))
          this.link(scope, bound, { module: target, name: null });
      }
      return;
    }
    const base = this.absolute(module, statement);
    for (const { name, bound } of statement.names) {
      for (const target of this.modules(base)) {
        // A star import's names were read once (Module.stars); loading it is all that is left.
        if (name === "*") continue;
        // Reaches `name` in the target once (and as far as) the bound name is used.
        this.link(scope, bound, { module: target, name });
      }
      if (name !== "*") {
        const sub = base === "" ? name : `${base}.${name}`;
        for (const target of this.modules(sub))
          this.link(scope, bound, { module: target, name: null });
      }
    }
  }

  /** The bundle modules an import statement runs (packages first, as Python does). */
  private importedModules(module: Module, statement: ImportStatement): Module[] {
    const names: string[] = [];
    if (statement.from === null) {
      for (const { name } of statement.names) names.push(name);
    } else {
      const base = this.absolute(module, statement);
      if (base !== "") names.push(base);
      for (const { name } of statement.names) {
        if (name !== "*") names.push(base === "" ? name : `${base}.${name}`);
      }
    }
    const out: Module[] = [];
    for (const name of names) {
      const parts = name.split(".");
      for (let n = 1; n <= parts.length; n++)
        out.push(...this.modules(parts.slice(0, n).join(".")));
    }
    return out;
  }

  /** The module a `from` import names, relative imports resolved against `module`'s package. */
  private absolute(module: Module, statement: ImportStatement): string {
    const from = statement.from ?? "";
    if (statement.level === 0) return from;
    const parts = module.name.split(".");
    // A module's package is its name minus the last part; a package (`__init__.py`) is its own.
    if (!module.path.endsWith("__init__.py")) parts.pop();
    for (let up = 1; up < statement.level; up++) parts.pop();
    if (from !== "") parts.push(from);
    return parts.filter((part) => part !== "").join(".");
  }
}

/**
 * Whether tokens [from, to) read a name that may hold the bundle's code (a module-level
 * definition or a name imported from a bundle module) or define a function (`lambda`).
 */
function readsDefinition(module: Module, from: number, to: number): boolean {
  const { tokens } = module;
  for (let i = from; i < to; i++) {
    const token = tokens[i]!;
    if (token.kind === "keyword" && token.text === "lambda") return true;
    if (token.kind !== "name" || tokens[i - 1]?.text === ".") continue;
    if (module.definitions.has(token.text)) return true;
  }
  return false;
}

/** A string literal's text without its prefix and quotes (escapes left as written). */
function stringBody(text: string): string {
  return text
    .replace(/^[A-Za-z]*/, "")
    .replace(/^("""|'''|"|')/, "")
    .replace(/("""|'''|"|')$/, "");
}

/** The identifiers inside an f-string's `{...}` fields (names, attributes, keywords alike). */
function fStringNames(text: string): string[] {
  const names: string[] = [];
  for (const field of stringBody(text).matchAll(/\{([^{}]*)\}/g)) {
    names.push(...(field[1]!.match(/[A-Za-z_]\w*/g) ?? []));
  }
  return names;
}

/** Where `name` used in `scope` is bound, as Python resolves it (builtins fall to the module). */
function resolve(scope: Scope, name: string): Scope {
  let current: Scope | null = scope;
  // A class body sees its own names; functions defined in it do not.
  if (current.kind === "class") {
    if (current.locals.has(name)) return current;
    current = current.parent;
  }
  while (current !== null) {
    if (current.kind === "module") return current;
    if (current.kind === "function" && current.locals.has(name)) return current;
    current = current.parent;
  }
  return scope.module.scope;
}

/** Whether `statement` starts a statement (so an `import` or `from` there is an import). */
function startsStatement(tokens: readonly PythonToken[], at: number): boolean {
  if (tokens[at]!.indent >= 0) return true;
  const previous = tokens[at - 1];
  return previous?.kind === "op" && (previous.text === ";" || previous.text === ":");
}

function isTerminator(tokens: readonly PythonToken[], statement: Statement): boolean {
  const head = tokens[statement.head]!;
  return (
    statement.kind === "simple" &&
    head.kind === "keyword" &&
    (head.text === "return" ||
      head.text === "raise" ||
      head.text === "continue" ||
      head.text === "break")
  );
}

/** `if __name__ == "__main__":` and `if False:` / `if 0:` / `if None:` (or `elif`, `while`). */
function neverRuns(tokens: readonly PythonToken[], statement: Statement): boolean {
  if (statement.kind !== "compound") return false;
  const keyword = tokens[statement.head]!.text;
  if (keyword !== "if" && keyword !== "elif" && keyword !== "while") return false;
  const condition = tokens.slice(statement.head + 1, statement.headerEnd);
  const colon = condition.findIndex((token) => token.kind === "op" && token.text === ":");
  if (colon === -1) return false;
  const texts = condition.slice(0, colon).map((token) => token.text);
  if (texts.length === 1) return texts[0] === "False" || texts[0] === "None" || texts[0] === "0";
  if (texts.length !== 3 || texts[1] !== "==" || keyword === "while") return false;
  const isMain = (text: string) => /^[rRuU]?("__main__"|'__main__')$/.test(text);
  return (
    (texts[0] === "__name__" && isMain(texts[2]!)) || (texts[2] === "__name__" && isMain(texts[0]!))
  );
}

/**
 * Whether a module- or class-level `def`/`class` of `name` is rebound by a later sibling `def` or
 * `class` before anything reads it: Python keeps only the later one. Decorated ones never count
 * (a decorator may have kept a reference), and neither does a later assignment (it may read the
 * name).
 */
function isShadowed(
  module: Module,
  statement: Statement,
  siblings: readonly Statement[],
  index: number,
  name: string,
): boolean {
  if (statement.start !== statement.head) return false;
  const { tokens } = module;
  const later = nextDefinition(tokens, siblings, index, name);
  if (later === null) return false;
  // Its own name token is the rebinding; any other occurrence up to its end may read it.
  return countIn(occurrencesOf(module, name), statement.end, later.end) === 1;
}

function occurrencesOf(module: Module, name: string): readonly number[] {
  if (module.occurrences === null) {
    const occurrences = new Map<string, number[]>();
    const add = (name: string, i: number) => {
      const list = occurrences.get(name);
      if (list) list.push(i);
      else occurrences.set(name, [i]);
    };
    module.tokens.forEach((token, i) => {
      if (token.kind === "name") add(token.text, i);
      // An f-string's fields are code that may read the name.
      else if (token.kind === "string" && isFString(token.text)) {
        for (const word of fStringNames(token.text)) add(word, i);
      }
    });
    module.occurrences = occurrences;
  }
  return module.occurrences.get(name) ?? [];
}

// Per suite: the indices of its `def`/`class` statements by name (one pass per suite, so a
// bundle of thousands of definitions stays linear).
const definitionIndex = new WeakMap<readonly Statement[], Map<string, number[]>>();

function nextDefinition(
  tokens: readonly PythonToken[],
  siblings: readonly Statement[],
  index: number,
  name: string,
): Statement | null {
  let byName = definitionIndex.get(siblings);
  if (!byName) {
    byName = new Map();
    siblings.forEach((sibling, i) => {
      if (sibling.kind !== "def" && sibling.kind !== "class") return;
      const defined = definedName(tokens, sibling);
      if (defined === null) return;
      const list = byName!.get(defined);
      if (list) list.push(i);
      else byName!.set(defined, [i]);
    });
    definitionIndex.set(siblings, byName);
  }
  const indices = byName.get(name) ?? [];
  const next = indices[lowerBound(indices, index + 1)];
  return next === undefined ? null : siblings[next]!;
}

/** How many of the ascending `positions` fall in [from, to). */
function countIn(positions: readonly number[], from: number, to: number): number {
  return lowerBound(positions, to) - lowerBound(positions, from);
}

function lowerBound(positions: readonly number[], value: number): number {
  let low = 0;
  let high = positions.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (positions[middle]! < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** The module-level statements of a module body: its own and those inside its compound ones. */
function* moduleLevel(statements: readonly Statement[]): Generator<Statement> {
  for (const statement of statements) {
    yield statement;
    if (statement.kind === "compound") yield* moduleLevel(statement.body);
  }
}

/** Where a `def`/`class` header's colon is, and the parameter tokens it binds. */
function readHeader(
  tokens: readonly PythonToken[],
  statement: Statement,
): { colon: number; bindings: Set<number> } {
  let at = statement.head;
  if (tokens[at]?.text === "async") at++;
  const bindings = new Set<number>([at + 1]);
  const isDef = tokens[at]?.text === "def";
  let depth = 0;
  for (let i = at + 2; i < statement.headerEnd; i++) {
    const token = tokens[i]!;
    if (token.kind === "op") {
      if (token.text === "(" || token.text === "[" || token.text === "{") depth++;
      else if (token.text === ")" || token.text === "]" || token.text === "}") depth--;
      else if (depth === 0 && token.text === ":") return { colon: i, bindings };
      continue;
    }
    const previous = tokens[i - 1]!;
    if (
      isDef &&
      depth === 1 &&
      token.kind === "name" &&
      previous.kind === "op" &&
      ["(", ",", "*", "**"].includes(previous.text)
    ) {
      bindings.add(i);
    }
  }
  return { colon: statement.headerEnd - 1, bindings };
}

/**
 * The names a function binds in its own scope (parameters, assignment, `for`, `with`/`except`
 * targets, `:=`, imports, nested definitions; minus its `global` and `nonlocal` names), or the
 * members a class body binds. Missing one only keeps more (its uses then count as the module's).
 */
function bindingsOf(
  tokens: readonly PythonToken[],
  statement: Statement,
  header: { colon: number; bindings: Set<number> },
  isClass: boolean,
): Set<string> {
  const names = new Set<string>();
  const outer = new Set<string>();
  if (!isClass) {
    for (const i of header.bindings) if (i !== header.colon) names.add(tokens[i]!.text);
    // The function's own name token is in `bindings` too; it is not a local.
    let at = statement.head;
    if (tokens[at]?.text === "async") at++;
    names.delete(tokens[at + 1]?.text ?? "");
  }
  const visit = (statements: readonly Statement[]) => {
    for (const inner of statements) {
      const head = tokens[inner.head]!;
      if (inner.kind === "def" || inner.kind === "class") {
        const name = definedName(tokens, inner);
        if (name !== null) names.add(name);
        continue;
      }
      if (inner.kind === "import" || inner.kind === "from") {
        const read = readImport(tokens, inner.head, inner.headerEnd);
        for (const entry of read?.statement.names ?? []) {
          if (entry.bound !== "*") names.add(entry.bound);
        }
        continue;
      }
      if (head.kind === "keyword" && (head.text === "global" || head.text === "nonlocal")) {
        for (let i = inner.head + 1; i < inner.headerEnd; i++) {
          if (tokens[i]!.kind === "name") outer.add(tokens[i]!.text);
        }
      }
      if (inner.kind === "simple") {
        const targets = assignmentTargets(tokens, inner);
        for (const name of targets?.binds ?? []) names.add(name);
      } else {
        compoundTargets(tokens, inner, names);
      }
      walrusTargets(tokens, inner.head, inner.headerEnd, names);
      visit(inner.body);
    }
  };
  visit(statement.body);
  for (const name of outer) names.delete(name);
  return names;
}

/** `for a, b in`, `with x as a`, `except E as a`: the names a compound header binds. */
function compoundTargets(tokens: readonly PythonToken[], statement: Statement, names: Set<string>) {
  let at = statement.head;
  if (tokens[at]?.text === "async") at++;
  if (tokens[at]?.text === "for") {
    for (let i = at + 1; i < statement.headerEnd; i++) {
      const token = tokens[i]!;
      if (token.kind === "keyword" && token.text === "in") break;
      if (token.kind === "name" && tokens[i - 1]?.text !== ".") names.add(token.text);
    }
  }
  for (let i = at; i < statement.headerEnd - 1; i++) {
    if (
      tokens[i]!.kind === "keyword" &&
      tokens[i]!.text === "as" &&
      tokens[i + 1]!.kind === "name"
    ) {
      names.add(tokens[i + 1]!.text);
    }
  }
}

function walrusTargets(
  tokens: readonly PythonToken[],
  from: number,
  to: number,
  names: Set<string>,
) {
  for (let i = from + 1; i < to; i++) {
    if (tokens[i]!.kind === "op" && tokens[i]!.text === ":=" && tokens[i - 1]!.kind === "name") {
      names.add(tokens[i - 1]!.text);
    }
  }
}
