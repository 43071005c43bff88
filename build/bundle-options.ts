// What esbuild is told to make of the banlieue CLI: one CommonJS file holding
// every dependency, with the version stamped in. build/bundle.ts writes the
// release bundle with it; the tests start their roles from the same bundle
// (test/support/cli-bundle.ts).
import type { BuildOptions, Plugin } from 'esbuild';

/** What the bundle says of itself (`banlieue --version`). */
export interface Stamp {
  readonly version: string;
  /** The commit it was built from; none for a bundle of the working tree. */
  readonly commit?: string;
}

/**
 * infra/version.ts finds package.json from `import.meta.url`, which a
 * CommonJS bundle does not have; the bundle gets the values as constants, and
 * the commit it was built from.
 */
function versionConstants(info: Stamp): Plugin {
  return {
    name: 'banlieue-version',
    setup(b) {
      b.onLoad({ filter: /[/\\]infra[/\\]version\.ts$/ }, () => ({
        loader: 'ts',
        contents: [
          `export const PACKAGE_VERSION: string = ${JSON.stringify(info.version)};`,
          `export const RELEASE_TAG = ${JSON.stringify(`v${info.version}`)};`,
          `export const BUILD_COMMIT: string | undefined = ${info.commit === undefined ? 'undefined' : JSON.stringify(info.commit)};`,
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

/**
 * vega-canvas's Node build awaits `import('canvas')` at top level (node-canvas, to measure text),
 * which a CommonJS bundle cannot hold; its browser build is the same module without that import.
 * The placement picture needs no canvas: without one, Vega estimates text widths, as it does when
 * node-canvas is not installed.
 */
const vegaWithoutNodeCanvas: Plugin = {
  name: 'banlieue-vega-without-node-canvas',
  setup(b) {
    b.onResolve({ filter: /^vega-canvas$/ }, async (args) => {
      if (args.pluginData === vegaWithoutNodeCanvas) return undefined;
      const node = await b.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, pluginData: vegaWithoutNodeCanvas });
      if (node.errors.length > 0) return { errors: node.errors };
      return { path: node.path.replace(/vega-canvas\.node\.js$/, 'vega-canvas.browser.js') };
    });
  },
};

/** Bundles controller/cli/main.ts, stamped with `stamp`, into `outfile`. */
export function bundleOptions(stamp: Stamp, outfile: string): BuildOptions {
  return {
    stdin: {
      // controller/cli/run.ts awaits at top level, which CommonJS cannot.
      contents: "import { main } from './controller/cli/main.ts';\nvoid main(process.argv).then((code) => { process.exitCode = code; });\n",
      resolveDir: '.',
      sourcefile: 'banlieue-entry.ts',
      loader: 'ts',
    },
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    legalComments: 'eof',
    // V8 keeps a script's source for as long as the process runs. Without comments and indentation it is a third
    // smaller, and ASCII: one comment with a character beyond Latin-1 made the whole source a two-byte string,
    // 12.6 MiB of every role's heap instead of 4.4. Names are kept, so stack traces still read.
    minifyWhitespace: true,
    logLevel: 'warning',
    plugins: [versionConstants(stamp), withoutOptionalModules, vegaWithoutNodeCanvas],
  };
}
