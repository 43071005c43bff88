// Bundles the banlieue CLI into one CommonJS file with esbuild, the script of
// the single executable (build/binary.sh) and so of the image: a Node
// single-executable application runs one CommonJS script and `require`s only
// Node's built-in modules, so every dependency is inside the bundle.
//
//   npx tsx build/bundle.ts <build-info file> <out.cjs>
//
// The bundle is reproducible: esbuild's output depends only on its inputs, and
// the one input that is not a source file, the build info (version, commit),
// comes from the file build/build-info.sh writes.
import { argv, exit, stderr } from 'node:process';
import { build, type Plugin } from 'esbuild';
import { readBuildInfo, type BuildInfo } from './build-info.js';

/**
 * infra/version.ts finds package.json from `import.meta.url`, which a
 * CommonJS bundle does not have; the bundle gets the values as constants, and
 * the commit it was built from.
 */
function versionConstants(info: BuildInfo): Plugin {
  return {
    name: 'banlieue-version',
    setup(b) {
      b.onLoad({ filter: /[/\\]infra[/\\]version\.ts$/ }, () => ({
        loader: 'ts',
        contents: [
          `export const PACKAGE_VERSION: string = ${JSON.stringify(info.version)};`,
          `export const RELEASE_TAG = ${JSON.stringify(`v${info.version}`)};`,
          `export const BUILD_COMMIT: string | undefined = ${JSON.stringify(info.commit)};`,
        ].join('\n'),
      }));
    },
  };
}

/**
 * Optional modules that dependencies `require` in try/catch and do without:
 * ssh2's native addons (cpu-features, sshcrypto.node), ws's bufferutil and
 * utf-8-validate, node-fetch's encoding. A single executable's `require` loads
 * only built-in modules (and warns on every other), so the bundle holds a
 * module in their place that throws as a missing one does.
 */
const OPTIONAL_MODULES = /^(cpu-features|bufferutil|utf-8-validate|encoding)$|\.node$/;

const withoutOptionalModules: Plugin = {
  name: 'banlieue-without-optional-modules',
  setup(b) {
    b.onResolve({ filter: OPTIONAL_MODULES }, (args) => ({ path: args.path, namespace: 'optional-module' }));
    b.onLoad({ filter: /.*/, namespace: 'optional-module' }, (args) => ({
      loader: 'js',
      contents: `throw new Error(${JSON.stringify(`${args.path}: optional module, not part of the banlieue bundle`)});`,
    }));
  },
};

async function main(): Promise<void> {
  const [infoPath, out] = argv.slice(2);
  if (!infoPath || !out) throw new Error('usage: bundle.ts <build-info file> <out.cjs>');
  const result = await build({
    stdin: {
      // controller/cli/run.ts awaits at top level, which CommonJS cannot.
      contents: "import { main } from './controller/cli/main.ts';\nvoid main(process.argv).then((code) => { process.exitCode = code; });\n",
      resolveDir: '.',
      sourcefile: 'banlieue-entry.ts',
      loader: 'ts',
    },
    outfile: out,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    legalComments: 'eof',
    logLevel: 'warning',
    plugins: [versionConstants(readBuildInfo(infoPath)), withoutOptionalModules],
  });
  if (result.errors.length > 0) exit(1);
}

main().catch((err: unknown) => {
  stderr.write(`bundle.ts: ${err instanceof Error ? err.message : String(err)}\n`);
  exit(1);
});
