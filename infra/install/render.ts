// The install rendered in process: what `cdk8s synth` writes to dist/ and what
// `banlieue bootstrap operator` applies or prints.
import { App } from 'cdk8s';
import { addInstallCharts } from './banlieue-install.js';
import type { BanlieueInstallProps } from './install-props.js';

export interface ManifestObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [key: string]: unknown;
}

export interface RenderedChart {
  /** Chart id, e.g. banlieue-crds. */
  readonly name: string;
  readonly objects: ManifestObject[];
}

function newApp(): App {
  // outdir is never written: rendering only calls toJson / synthYaml.
  return new App({ outdir: 'dist' });
}

/** Every object of the install, chart by chart, in apply order. */
export function renderInstall(props: BanlieueInstallProps = {}): RenderedChart[] {
  const app = newApp();
  addInstallCharts(app, props);
  // app.charts is topologically sorted, i.e. the apply order.
  return app.charts.map((chart) => ({ name: chart.node.id, objects: chart.toJson() as ManifestObject[] }));
}

/** The install as one multi-document YAML, byte for byte what synth writes across dist/. */
export function renderInstallYaml(props: BanlieueInstallProps = {}): string {
  const app = newApp();
  addInstallCharts(app, props);
  return app.synthYaml();
}
