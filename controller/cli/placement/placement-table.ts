// The placement view as text tables, columns aligned as kubectl aligns them (pure). Each
// figure is "placed / published": what the VMs placed there ask for, next to the room the
// Provider publishes; `-` where the backend publishes no such figure.
import { compareText } from '../../scheduler/compare-text.js';
import type { PlacementRow, PlacementView } from './placement-view.js';

export interface TableOptions {
  /** Add a NAMESPACE column (-A). */
  readonly allNamespaces: boolean;
}

/** The placement table's cells: header, then one row per (Provider, failure domain). */
export function toPlacementCells(view: PlacementView, options: TableOptions): string[][] {
  const header = ['PROVIDER', 'CLASS', 'FAILURE DOMAIN', 'VMS', 'CPUS', 'MEMORY', 'STORAGE', 'PLACED'];
  const rows = view.rows.map((row) => [
    row.provider,
    row.backend || '-',
    row.published ? row.failureDomain : `${row.failureDomain} (not published)`,
    String(row.placed.vms),
    formatCpus(row),
    formatMemory(row),
    formatStorage(row),
    formatPlaced(row),
  ]);
  return withNamespace([header, ...rows], view.rows, options);
}

/** The VMs not placed yet: header, then one row each with its Scheduled reason. */
export function toUnplacedCells(view: PlacementView, options: TableOptions): string[][] {
  const rows = view.unplaced.map((vm) => [vm.name, vm.reason]);
  return withNamespace([['NOT PLACED', 'REASON'], ...rows], view.unplaced, options);
}

/** `banlieue placement`'s text output, `where` naming what was read (`namespace "a"`, `any namespace`). */
export function toPlacementTable(view: PlacementView, options: TableOptions, where: string): string {
  if (view.rows.length === 0 && view.unplaced.length === 0) return `No Providers or VirtualMachines found in ${where}.\n`;
  const blocks: string[] = [];
  if (view.rows.length > 0) blocks.push(alignColumns(toPlacementCells(view, options)));
  if (view.unplaced.length > 0) blocks.push(alignColumns(toUnplacedCells(view, options)));
  return blocks.join('\n');
}

/** Columns padded to their widest cell, three spaces apart, as kubectl prints them. */
export function alignColumns(cells: readonly (readonly string[])[]): string {
  const widths = cells[0]?.map((_, i) => Math.max(...cells.map((r) => r[i]?.length ?? 0))) ?? [];
  return cells.map((r) => `${r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('   ')}\n`).join('');
}

function withNamespace(cells: string[][], objects: readonly { readonly namespace: string }[], options: TableOptions): string[][] {
  if (!options.allNamespaces) return cells;
  return cells.map((r, i) => [i === 0 ? 'NAMESPACE' : (objects[i - 1]?.namespace ?? ''), ...r]);
}

/** `4/16`: virtual CPUs placed, logical CPUs of the largest host. */
function formatCpus(row: PlacementRow): string {
  return `${row.placed.cpus}${unknownMark(row)}/${row.capacity?.cpus ?? '-'}`;
}

/** `4/32 GiB, 20 free`: memory placed, memory for VMs in total, memory not in use. */
function formatMemory(row: PlacementRow): string {
  const total = row.capacity?.memoryMiB;
  const free = row.capacity?.freeMemoryMiB;
  const placed = `${formatGiB(row.placed.memoryMiB)}${unknownMark(row)}/${total === undefined ? '-' : formatGiB(total)} GiB`;
  return free === undefined ? placed : `${placed}, ${formatGiB(free)} free`;
}

/** `pool-a 40/200 GiB, 96 free; pool-b …`: per storage target published or placed on, disks placed and its size and free space. */
function formatStorage(row: PlacementRow): string {
  const published = row.capacity?.storage ?? [];
  const targets = [...new Set([...published.map((s) => s.target), ...row.placed.storageGiB.keys()])].sort(compareText);
  if (targets.length === 0) return '-';
  return targets
    .map((target) => {
      const storage = published.find((s) => s.target === target);
      const placed = `${row.placed.storageGiB.get(target) ?? 0}${unknownMark(row)}`;
      if (!storage) return `${target} ${placed}/- GiB`;
      return `${target} ${placed}/${storage.capacityGiB ?? '-'} GiB, ${storage.freeGiB} free`;
    })
    .join('; ');
}

/** The VMs placed there, `(pending)` after one whose machine is not provisioned yet, then the machines no VM controls. */
function formatPlaced(row: PlacementRow): string {
  const names = [...row.vms.map((vm) => (vm.provisioned ? vm.name : `${vm.name} (pending)`)), ...row.machines];
  return names.length === 0 ? '-' : names.join(', ');
}

/** `+`: some VMs' class was not found, so the sum leaves them out. */
function unknownMark(row: PlacementRow): string {
  return row.placed.unknown > 0 ? '+' : '';
}

/** MiB as GiB, to one decimal when not whole. */
export function formatGiB(mib: number): string {
  return String(Math.round((mib / 1024) * 10) / 10);
}
