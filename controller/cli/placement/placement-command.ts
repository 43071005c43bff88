// `banlieue placement`: which VMs are placed on which Provider and failure domain, next to the
// room each failure domain publishes, as a table, an SVG picture or an HTML page holding both.
// Reading (read-placement.ts) is apart from the view (placement-view.ts) and its renderings;
// the picture's libraries load only for a picture.
import { KubeApi } from '../../runtime/kube-api.js';
import { loadKubeConfig, namespaceOf } from '../../runtime/kube-config.js';
import type { PlacementOutput } from './placement-output.js';
import { toPlacementTable } from './placement-table.js';
import { computePlacementView } from './placement-view.js';
import { readPlacementObjects } from './read-placement.js';

export interface PlacementOptions {
  readonly namespace?: string;
  readonly allNamespaces?: boolean;
  readonly output: PlacementOutput;
  readonly kubeconfig?: string;
  readonly context?: string;
}

/** Runs `banlieue placement`: the text it prints. */
export async function placementCommand(options: PlacementOptions): Promise<string> {
  const kc = loadKubeConfig(options.kubeconfig, options.context);
  const allNamespaces = options.allNamespaces === true;
  const namespace = allNamespaces ? undefined : (options.namespace ?? namespaceOf(kc));
  const view = computePlacementView(await readPlacementObjects(new KubeApi(kc), namespace));
  const where = namespace === undefined ? 'any namespace' : `namespace "${namespace}"`;
  if (options.output === 'table') return toPlacementTable(view, { allNamespaces }, where);
  const title = `banlieue placement: ${where}`;
  const [{ renderPlacementSvg }, { toPlacementPage }] = await Promise.all([import('./placement-chart.js'), import('./placement-page.js')]);
  const svg = await renderPlacementSvg(view, { allNamespaces, title });
  return options.output === 'svg' ? `${svg}\n` : toPlacementPage(view, svg, { allNamespaces, title });
}
