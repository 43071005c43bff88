/** What `banlieue placement --output` takes: a text table, an SVG picture, or an HTML page holding both. */
export const PLACEMENT_OUTPUTS = ['table', 'svg', 'html'] as const;
export type PlacementOutput = (typeof PLACEMENT_OUTPUTS)[number];
