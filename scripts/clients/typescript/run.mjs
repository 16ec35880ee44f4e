#!/usr/bin/env node
// A TypeScript team's client of the service, made the way such a team makes it, driven against a running server:
//   1. openapi-typescript writes `api.d.ts` from the document the server serves (`<base>/openapi.json`); every
//      warning it prints is listed in the report;
//   2. scenario.ts (copied beside it) is compiled with `tsc --strict` against it and openapi-fetch;
//   3. the compiled scenario runs under node against the server (scenario.ts says what it checks).
// With SCENARIO=faults, faults.ts instead of scenario.ts (the scenario against a project with 429 and 503 faults
// on, with and without the few lines of retrying `fetch` openapi-fetch needs).
// The versions are pinned in ../package.json and ../package-lock.json (installed by ../install.sh).
//
// Prints a JSON report on stdout: { generators: { name: { version, warnings } }, calls, kinds, error }.
// Run by crates/bridge-sandbox/tests/it/clients.rs; by hand (after scripts/clients/install.sh, with a sandbox
// running and a token of `bridge-sandbox token --project p`):
//   node scripts/clients/typescript/run.mjs http://127.0.0.1:8080 "$TOKEN" "$(mktemp -d)"

import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const modules = path.join(here, '..', 'node_modules');
const [base, token, work] = process.argv.slice(2);
if (!base || !token || !work) {
  console.error('usage: run.mjs <base-url> <project JWT> <work directory>');
  process.exit(2);
}
const version = (name) => JSON.parse(fs.readFileSync(path.join(modules, name, 'package.json'), 'utf8')).version;
const report = { generators: {}, calls: [], error: null };
const scenarioName = process.env.SCENARIO ?? 'scenario';

function run(name, args) {
  const out = spawnSync(process.execPath, args, { cwd: work, encoding: 'utf8', timeout: 600_000 });
  if (out.error) throw out.error;
  return { status: out.status, lines: `${out.stdout}${out.stderr}`.split('\n').filter((l) => l.trim()) };
}

try {
  // 1. The types, from the served document. Its usual output is a banner and a line naming the file written.
  const doc = `${base}/openapi.json`;
  const gen = run('openapi-typescript', [path.join(modules, 'openapi-typescript', 'bin', 'cli.js'), doc, '-o', 'api.d.ts']);
  const warnings = gen.lines.filter((l) => !/^✨ openapi-typescript|^🚀 /u.test(l.trim()));
  report.generators['openapi-typescript'] = { version: version('openapi-typescript'), warnings, status: gen.status };
  if (gen.status !== 0) throw new Error(`openapi-typescript failed:\n${gen.lines.join('\n')}`);

  // 2. The scenario, compiled with --strict against the types and openapi-fetch.
  fs.copyFileSync(path.join(here, `${scenarioName}.ts`), path.join(work, `${scenarioName}.ts`));
  fs.writeFileSync(path.join(work, 'package.json'), JSON.stringify({ type: 'module' }));
  fs.rmSync(path.join(work, 'node_modules'), { force: true, recursive: true });
  fs.symlinkSync(modules, path.join(work, 'node_modules'), 'dir');
  fs.writeFileSync(
    path.join(work, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        target: 'es2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        lib: ['es2022', 'dom'],
        outDir: 'out',
        noUncheckedIndexedAccess: true,
        skipLibCheck: false,
      },
      files: [`${scenarioName}.ts`, 'api.d.ts'],
    }),
  );
  const tsc = run('tsc', [path.join(modules, 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json']);
  report.generators.typescript = { version: version('typescript'), warnings: tsc.lines, status: tsc.status };
  report.generators['openapi-fetch'] = { version: version('openapi-fetch'), warnings: [], status: 0 };
  if (tsc.status !== 0) throw new Error(`tsc --strict failed:\n${tsc.lines.join('\n')}`);

  // 3. The scenario against the server.
  let out;
  try {
    out = execFileSync(process.execPath, [path.join(work, 'out', `${scenarioName}.js`), base, token], { cwd: work, encoding: 'utf8' });
  } catch (e) {
    out = e.stdout;
  }
  Object.assign(report, JSON.parse(out));
} catch (e) {
  report.error = String(e?.stack ?? e);
}
process.stdout.write(JSON.stringify(report));
process.exitCode = report.error ? 1 : 0;
