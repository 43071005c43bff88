// The placement view as one self-contained HTML page (pure): the SVG picture inline and the
// tables under it, nothing fetched (the page is read offline, mailed, attached to a ticket).
// The document is built as a tree by the XML builder, which escapes every name it carries,
// and the SVG is parsed into that tree rather than pasted in as text.
import { XMLBuilder, XMLParser } from 'fast-xml-parser';
import { toPlacementCells, toUnplacedCells, type TableOptions } from './placement-table.js';
import type { PlacementView } from './placement-view.js';

/** An element in the builder's ordered form: `{ tag: children, ':@': attributes }`, or a text node. */
type Node = { readonly [tag: string]: readonly Node[] | Readonly<Record<string, string>> } | { readonly '#text': string };

const ORDERED = { preserveOrder: true, ignoreAttributes: false, attributeNamePrefix: '@_' } as const;
const svgParser = new XMLParser({ ...ORDERED, parseAttributeValue: false, parseTagValue: false, trimValues: false });
// Empty elements stay open/close pairs (an HTML parser reads `<td/>` as an open <td>); only <meta> is a void element here.
const pageBuilder = new XMLBuilder({ ...ORDERED, unpairedTags: ['meta'], suppressUnpairedNode: false });

const STYLE = [
  'body { font-family: system-ui, sans-serif; margin: 1.5em; }',
  'table { border-collapse: collapse; margin-top: 1.5em; font-size: 0.9em; }',
  'th, td { border-bottom: 1px solid #ccd; padding: 0.3em 0.8em; text-align: left; vertical-align: top; }',
  'th { background: #eef1f5; }',
].join('\n');

/** The page for `view`: `title` as its heading, `svg` (renderPlacementSvg's) and the tables. */
export function toPlacementPage(view: PlacementView, svg: string, options: TableOptions & { readonly title: string }): string {
  const picture = (svgParser.parse(svg) as Node[]).filter((n) => 'svg' in n);
  const tables = [toPlacementCells(view, options), ...(view.unplaced.length > 0 ? [toUnplacedCells(view, options)] : [])];
  const page: Node[] = [
    element('html', { lang: 'en' }, [
      element('head', {}, [element('meta', { charset: 'utf-8' }, []), element('title', {}, [text(options.title)]), element('style', {}, [text(STYLE)])]),
      element('body', {}, [element('h1', {}, [text(options.title)]), ...picture, ...tables.map(toTable)]),
    ]),
  ];
  return `<!DOCTYPE html>\n${pageBuilder.build(page) as string}\n`;
}

function toTable(cells: readonly (readonly string[])[]): Node {
  const [header = [], ...rows] = cells;
  return element('table', {}, [
    element('thead', {}, [
      element(
        'tr',
        {},
        header.map((c) => element('th', {}, [text(c)])),
      ),
    ]),
    element(
      'tbody',
      {},
      rows.map((r) =>
        element(
          'tr',
          {},
          r.map((c) => element('td', {}, [text(c)])),
        ),
      ),
    ),
  ]);
}

function element(tag: string, attributes: Record<string, string>, children: readonly Node[]): Node {
  const prefixed = Object.fromEntries(Object.entries(attributes).map(([k, v]) => [`@_${k}`, v]));
  return Object.keys(prefixed).length > 0 ? { [tag]: children, ':@': prefixed } : { [tag]: children };
}

function text(value: string): Node {
  return { '#text': value };
}
