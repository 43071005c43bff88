import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { renderPlacementSvg, toChartData } from '../../../../controller/cli/placement/placement-chart.js';
import { toPlacementPage } from '../../../../controller/cli/placement/placement-page.js';
import { computePlacementView } from '../../../../controller/cli/placement/placement-view.js';
import { C2, capiMachine, objects } from './fixtures.js';

const view = computePlacementView(objects({ machines: [capiMachine('VSphereMachine', 'md-0-abc', C2)] }));
const title = 'banlieue placement: namespace "team-a"';

/** Every text of an XML document, in order. */
function textsOf(xml: string): string[] {
  const texts: string[] = [];
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node !== null && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key === '#text') texts.push(String(value));
        else if (key !== ':@') visit(value);
      }
    }
  };
  visit(new XMLParser({ preserveOrder: true, ignoreAttributes: false }).parse(xml));
  return texts;
}

describe('banlieue placement picture', () => {
  it("draws each failure domain's published room and its VMs end to end, per resource", () => {
    const c1 = toChartData(view, { allNamespaces: false }).filter((d) => d.place === 'vcenter-a / vcenter-a-dc1-c1' && d.panel === 'Memory (GiB)');
    expect(c1.map((d) => [d.kind, d.x, d.x2])).toEqual([
      ['published', 0, 256],
      ['pending', 0, 4],
      ['provisioned', 4, 8],
      ['provisioned', 8, 12],
      ['note', 256, 256],
    ]);
    expect(c1.at(-1)?.label).toBe('3 VMs: db-1 (pending), web-1, web-2');
  });

  it('has a panel for memory and one per storage target', () => {
    expect([...new Set(toChartData(view, { allNamespaces: false }).map((d) => d.panel))].sort()).toEqual([
      'Memory (GiB)',
      'Storage ds-hdd (GiB)',
      'Storage ds-ssd (GiB)',
    ]);
  });

  it('names the namespace of each place with -A', () => {
    expect(toChartData(view, { allNamespaces: true })[0]?.place).toBe('team-a: kvm-a / kvm-a');
  });

  it('renders an SVG document naming every failure domain, VM and machine', async () => {
    const svg = await renderPlacementSvg(view, { allNamespaces: false, title });
    const texts = textsOf(svg).join('\n');
    for (const name of [
      'vcenter-a / vcenter-a-dc1-c1',
      'vcenter-a / vcenter-a-dc1-c2',
      'kvm-a / kvm-a',
      'db-1 (pending)',
      'web-1',
      'web-2',
      'VSphereMachine/md-0-abc',
      title,
    ]) {
      expect(texts).toContain(name);
    }
  });

  it('renders an empty namespace as a picture with its title', async () => {
    const empty = computePlacementView({ providers: [], virtualMachines: [], vmClasses: [], machines: [] });
    expect(textsOf(await renderPlacementSvg(empty, { allNamespaces: false, title }))).toContain(title);
  });

  it('makes one page of the picture and the tables, escaping names and fetching nothing', async () => {
    const svg = await renderPlacementSvg(view, { allNamespaces: false, title });
    const page = toPlacementPage(view, svg, { allNamespaces: false, title: 'placement <of> "team-a" & co' });
    expect(page.startsWith('<!DOCTYPE html>\n<html lang="en">')).toBe(true);
    expect(page).toContain('<title>placement &lt;of&gt; &quot;team-a&quot; &amp; co</title>');
    expect(page).not.toMatch(/\b(src|href)=/);
    const texts = textsOf(page.replace('<!DOCTYPE html>', ''));
    expect(texts).toEqual(
      expect.arrayContaining(['FAILURE DOMAIN', 'vcenter-a-dc1-c1', 'db-1 (pending), web-1, web-2', 'NOT PLACED', 'web-9', 'kvm-a / kvm-a']),
    );
  });
});
