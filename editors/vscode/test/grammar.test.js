// The TextMate grammar, tokenised by vscode-textmate (VS Code's own tokenizer) with the
// Oniguruma regex engine VS Code uses, compared with goldens of scopes.
//
//   node test/grammar.test.js            compare (exit 1 on a difference)
//   node test/grammar.test.js --update   rewrite the goldens
//
// Inputs: test/fixtures/*.world (every construct of the language, golden always compared)
// and the repository's examples/**/*.world. An example's golden records the sha256 of the
// text it was made from: when the example has changed since, its golden is stale, and the
// example is held to the grammar's invariants only (nothing leaks past the end of the file:
// no string, regex or interpolation left open; every character that is not a name or a
// space gets a scope) until the golden is updated. The synthesised corpus (examples/corpus)
// has no goldens: it is held to the invariants only.
"use strict";

const crypto = require("crypto");
const fs = require("fs");
const path = require("path");
const textmate = require("vscode-textmate");
const oniguruma = require("vscode-oniguruma");

const HERE = __dirname;
const EXTENSION = path.dirname(HERE);
const REPOSITORY = path.resolve(EXTENSION, "..", "..");
const GOLDEN = path.join(HERE, "golden");
const GRAMMAR = path.join(EXTENSION, "syntaxes", "worldspec.tmLanguage.json");
const ROOT_SCOPE = "source.worldspec";

function worldFiles(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...worldFiles(full));
    else if (entry.name.endsWith(".world")) out.push(full);
  }
  return out;
}

async function loadGrammar() {
  const wasm = fs.readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm"));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scopeName) =>
      scopeName === ROOT_SCOPE ? textmate.parseRawGrammar(fs.readFileSync(GRAMMAR, "utf8"), GRAMMAR) : null,
  });
  return registry.loadGrammar(ROOT_SCOPE);
}

// One golden line per source line that has scoped tokens: `N: ` then each token with a scope
// as `text⟨scopes⟩`, the scopes without the root and without the `.worldspec` suffix (plain
// names and spaces, which get no scope, are left out).
function tokenise(grammar, text) {
  let stack = textmate.INITIAL;
  const lines = text.split(/\r?\n/);
  const out = [];
  const problems = [];
  lines.forEach((line, i) => {
    const result = grammar.tokenizeLine(line, stack);
    stack = result.ruleStack;
    const shown = [];
    for (const token of result.tokens) {
      const piece = line.slice(token.startIndex, token.endIndex);
      const scopes = token.scopes.filter((s) => s !== ROOT_SCOPE).map((s) => s.replace(/\.worldspec$/, ""));
      if (scopes.length === 0) {
        if (!/^[\sA-Za-z0-9_]*$/.test(piece)) problems.push(`line ${i + 1}: '${piece}' has no scope`);
        continue;
      }
      shown.push(`${piece.trim() || JSON.stringify(piece)}\u27e8${scopes.join(" ")}\u27e9`);
    }
    if (shown.length) out.push(`${i + 1}: ${shown.join(" ")}`);
  });
  if (stack.depth > 1) problems.push(`the end of the file is still inside a rule (depth ${stack.depth})`);
  return { golden: out.join("\n") + "\n", problems };
}

function goldenPath(file) {
  const relative = path.relative(REPOSITORY, file).split(path.sep).join("__");
  return path.join(GOLDEN, relative.replace(/\.world$/, ".tokens"));
}

async function main() {
  const update = process.argv.includes("--update");
  const grammar = await loadGrammar();
  const fixtures = worldFiles(path.join(HERE, "fixtures"));
  const examples = worldFiles(path.join(REPOSITORY, "examples"));
  const CORPUS = path.join(REPOSITORY, "examples", "corpus") + path.sep;
  let failures = 0;
  let passed = 0;
  let stale = 0;
  for (const file of [...fixtures, ...examples]) {
    const text = fs.readFileSync(file, "utf8");
    const digest = crypto.createHash("sha256").update(text).digest("hex");
    const { golden, problems } = tokenise(grammar, text);
    const shown = path.relative(REPOSITORY, file);
    const target = goldenPath(file);
    const content = `# sha256 ${digest}\n${golden}`;
    if (problems.length) {
      failures += 1;
      console.log(`FAIL ${shown}: ${problems.slice(0, 5).join("; ")}`);
      continue;
    }
    if (file.startsWith(CORPUS)) {
      // the synthesised corpus: machine-written and large, held to the invariants only
      passed += 1;
      continue;
    }
    if (update) {
      fs.writeFileSync(target, content);
      passed += 1;
      continue;
    }
    const before = fs.existsSync(target) ? fs.readFileSync(target, "utf8") : null;
    const isFixture = fixtures.includes(file);
    if (before === null) {
      failures += 1;
      console.log(`FAIL ${shown}: no golden (run: node test/grammar.test.js --update)`);
    } else if (!isFixture && !before.startsWith(`# sha256 ${digest}\n`)) {
      stale += 1;
      passed += 1;
      console.log(`note ${shown}: changed since its golden; held to the invariants only`);
    } else if (before !== content) {
      failures += 1;
      const a = before.split("\n");
      const b = content.split("\n");
      const at = a.findIndex((line, i) => line !== b[i]);
      console.log(`FAIL ${shown}: scopes differ from the golden at\n  golden: ${a[at]}\n  now:    ${b[at]}`);
    } else {
      passed += 1;
    }
  }
  if (update) console.log(`wrote ${passed} goldens`);
  if (stale) console.log(`${stale} stale goldens (node test/grammar.test.js --update refreshes them)`);
  console.log(`grammar: ${passed} passed, ${failures} failed`);
  process.exit(failures ? 1 : 0);
}

main().catch((err) => {
  console.error(err);
  process.exit(2);
});
