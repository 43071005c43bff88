// The placement view as a picture: a Vega-Lite specification (pure) rendered to SVG by Vega,
// headless (no canvas: text widths are estimated). One panel for memory and one per storage
// target; in each, a row per (Provider, failure domain) shows the room the Provider publishes
// as a pale bar and, over it, a segment per VM placed there, sized by what it asks for; a note
// after each memory bar names the VMs and machines placed there.
import { Error as ErrorLevel, logger, parse, View } from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import { compareText } from '../../scheduler/compare-text.js';
import type { PlacementRow, PlacementView } from './placement-view.js';

/** What a mark stands for; the legend names each. */
export const SEGMENT_KINDS = ['published', 'provisioned', 'pending'] as const;
export type SegmentKind = (typeof SEGMENT_KINDS)[number];

/** One bar, label or note of the picture. */
export interface ChartDatum {
  /** The panel: `Memory (GiB)` or `Storage <target> (GiB)`. */
  readonly panel: string;
  /** The row: `provider / failure domain`, namespace first with -A. */
  readonly place: string;
  readonly kind: SegmentKind | 'note';
  /** A VM's name, or a note's text; empty on a published bar. */
  readonly label: string;
  readonly x: number;
  readonly x2: number;
}

export interface ChartOptions {
  readonly allNamespaces: boolean;
  readonly title: string;
}

/** The data points of the picture: per panel and place, the published room and the VMs placed end to end; after each memory row, a note naming what is placed there. */
export function toChartData(view: PlacementView, options: Pick<ChartOptions, 'allNamespaces'>): ChartDatum[] {
  const data: ChartDatum[] = [];
  for (const row of view.rows) {
    const place = placeOf(row, options.allNamespaces);
    const memory = panel(MEMORY_PANEL, place, row.capacity?.memoryMiB, row, (vm) => vm.memoryMiB, 1024);
    const end = Math.max(0, ...memory.map((d) => d.x2));
    data.push(...memory, { panel: MEMORY_PANEL, place, kind: 'note', label: noteOf(row), x: end, x2: end });
    const targets = new Set([...(row.capacity?.storage ?? []).map((s) => s.target), ...row.placed.storageGiB.keys()]);
    for (const target of [...targets].sort(compareText)) {
      const size = row.capacity?.storage?.find((s) => s.target === target)?.capacityGiB;
      data.push(...panel(`Storage ${target} (GiB)`, place, size, row, (vm) => vm.storageGiB.get(target), 1));
    }
  }
  return labelWideSegments(data);
}

const MEMORY_PANEL = 'Memory (GiB)';
/** A segment narrower than this share of its panel's widest bar is left unnamed inside (the note names it). */
const LABEL_MIN_SHARE = 0.1;

/** The panel's points for one place: its published room (`size`, in `unit`s of the figure), then each VM placed there with its share. */
function panel(
  name: string,
  place: string,
  size: number | undefined,
  row: PlacementRow,
  shareOf: (vm: PlacementRow['vms'][number]) => number | undefined,
  unit: number,
): ChartDatum[] {
  const data: ChartDatum[] = [];
  if (size !== undefined) data.push({ panel: name, place, kind: 'published', label: '', x: 0, x2: size / unit });
  let at = 0;
  for (const vm of row.vms) {
    const share = (shareOf(vm) ?? 0) / unit;
    if (share <= 0) continue;
    data.push({ panel: name, place, kind: vm.provisioned ? 'provisioned' : 'pending', label: vm.name, x: at, x2: at + share });
    at += share;
  }
  return data;
}

/** `3 VMs: db-1 (pending), web-1; machines: VSphereMachine/md-0`. */
function noteOf(row: PlacementRow): string {
  const vms = row.vms.map((vm) => (vm.provisioned ? vm.name : `${vm.name} (pending)`));
  const parts = [`${vms.length} VM${vms.length === 1 ? '' : 's'}${vms.length > 0 ? `: ${vms.join(', ')}` : ''}`];
  if (row.machines.length > 0) parts.push(`machines: ${row.machines.join(', ')}`);
  return parts.join('; ');
}

/** Keeps a VM's name inside its segment only where the segment is wide enough to hold it. */
function labelWideSegments(data: readonly ChartDatum[]): ChartDatum[] {
  const widest = new Map<string, number>();
  for (const d of data) widest.set(d.panel, Math.max(widest.get(d.panel) ?? 0, d.x2));
  return data.map((d) =>
    d.kind === 'provisioned' || d.kind === 'pending' ? { ...d, label: d.x2 - d.x >= LABEL_MIN_SHARE * (widest.get(d.panel) ?? 0) ? d.label : '' } : d,
  );
}

function placeOf(row: PlacementRow, allNamespaces: boolean): string {
  const place = `${row.provider} / ${row.failureDomain}${row.published ? '' : ' (not published)'}`;
  return allNamespaces ? `${row.namespace}: ${place}` : place;
}

/** The Vega-Lite specification of the picture. */
export function toChartSpec(view: PlacementView, options: ChartOptions): TopLevelSpec {
  const bar = { type: 'bar', height: { band: 0.9 } } as const;
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: options.title,
    data: { values: toChartData(view, options) },
    facet: { row: { field: 'panel', type: 'nominal', title: null, header: { labelAngle: 0, labelAlign: 'left', labelFontWeight: 'bold' } } },
    resolve: { scale: { x: 'independent', y: 'independent' } },
    spec: {
      width: 480,
      height: { step: 26 },
      encoding: {
        y: { field: 'place', type: 'nominal', title: null, sort: null, axis: { labelLimit: 0 } },
        x: { field: 'x', type: 'quantitative', title: null },
        x2: { field: 'x2' },
      },
      layer: [
        {
          transform: [{ filter: "datum.kind !== 'note'" }],
          mark: { ...bar, stroke: 'white', strokeWidth: 1 },
          encoding: {
            color: {
              field: 'kind',
              type: 'nominal',
              title: null,
              scale: { domain: [...SEGMENT_KINDS], range: ['#dfe6ee', '#4c78a8', '#f58518'] },
              legend: { orient: 'top', labelExpr: "datum.label === 'published' ? 'published room' : 'VM ' + datum.label" },
            },
          },
        },
        {
          transform: [{ filter: "datum.kind === 'provisioned' || datum.kind === 'pending'" }, { calculate: '(datum.x + datum.x2) / 2', as: 'middle' }],
          mark: { type: 'text', color: 'white', fontSize: 10 },
          encoding: { x: { field: 'middle', type: 'quantitative' }, x2: null, text: { field: 'label' } },
        },
        {
          transform: [{ filter: "datum.kind === 'note'" }],
          mark: { type: 'text', align: 'left', dx: 4, fontSize: 10 },
          encoding: { x2: null, text: { field: 'label' } },
        },
      ],
    },
  } as TopLevelSpec;
}

/** The picture as an SVG document. */
export async function renderPlacementSvg(view: PlacementView, options: ChartOptions): Promise<string> {
  // Errors throw; warnings (a hint on how independent facet scales are sized) would reach the user's terminal.
  const quiet = logger(ErrorLevel);
  const vegaSpec = compile(toChartSpec(view, options), { logger: quiet }).spec;
  const chart = new View(parse(vegaSpec), { renderer: 'none', logger: quiet });
  try {
    return await chart.toSVG();
  } finally {
    chart.finalize();
  }
}
