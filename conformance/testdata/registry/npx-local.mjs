// npx-local runs an npm package the way `npx -y PACKAGE@VERSION ARGS...`
// does, but from an installed node_modules instead of the npm registry, so
// that a registry fleet can be checked without downloading anything:
//
//	toolguard-check -fleet servers.json -npx "node conformance/testdata/registry/npx-local.mjs"
//
// The node_modules is $TOOLGUARD_NODE_MODULES. The package must be
// installed there at exactly VERSION; otherwise it exits 127 and says so
// on standard error (the checker reports the target unreachable, with that
// line). The package's bin runs in this process, with ARGS as its own.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [spec, ...args] = process.argv.slice(2);
const nm = process.env.TOOLGUARD_NODE_MODULES;
const fail = (msg) => {
  process.stderr.write(`npx-local: ${msg}\n`);
  process.exit(127);
};
if (!nm) fail("TOOLGUARD_NODE_MODULES is not set");
if (!spec) fail("usage: npx-local.mjs PACKAGE@VERSION [ARG...]");
const at = spec.lastIndexOf("@");
if (at <= 0) fail(`${spec}: want PACKAGE@VERSION`);
const name = spec.slice(0, at);
const version = spec.slice(at + 1);
let pkg;
try {
  pkg = JSON.parse(readFileSync(join(nm, name, "package.json"), "utf8"));
} catch {
  fail(`${name} is not installed in ${nm}`);
}
if (pkg.version !== version) fail(`${name} is installed at ${pkg.version}, not ${version}`);
let bin = pkg.bin;
if (typeof bin === "object" && bin !== null) {
  const names = Object.keys(bin);
  const base = name.split("/").pop();
  bin = bin[base] ?? (names.length === 1 ? bin[names[0]] : undefined);
}
if (typeof bin !== "string") fail(`${name}@${version} has no single bin to run`);
const path = join(nm, name, bin);
process.argv = [process.argv[0], path, ...args];
await import(pathToFileURL(path).href);
