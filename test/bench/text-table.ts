// Columns padded to their widest cell: first column left-aligned (labels), the rest right-aligned (numbers).
export function textTable(rows: readonly (readonly string[])[], indent = '  '): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows
    .map(
      (row) =>
        indent +
        row
          .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
          .join('   ')
          .trimEnd(),
    )
    .join('\n');
}
