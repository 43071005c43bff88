// The docs site's VitePress configuration (build/docs-site.ts builds it): the
// pages are README.md (the home page), CHANGELOG.md and docs/**/*.md of the
// checkout, read as they are on the repository's own page. A relative link to
// any other file of the checkout (an example, a source file) points at the
// repository instead; a link that names no page and no file fails the build.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { DefaultTheme, MarkdownRenderer, UserConfig } from 'vitepress';

/** Where the repository is browsed: what a link to a file that is no page becomes. */
export const REPOSITORY_URL = 'https://github.com/banlieue/banlieue';

export interface DocsSiteProps {
  /** The checkout (or a tree laid out like it) whose Markdown is the site. */
  readonly srcDir: string;
  /** Where the site is written. */
  readonly outDir: string;
  /** VitePress's cache between builds. */
  readonly cacheDir: string;
}

const HOME = 'README.md';
const CHANGELOG = 'CHANGELOG.md';
const DOCS = 'docs';

/** The site's pages, from srcDir: README.md, CHANGELOG.md when there is one, and every Markdown file under docs/. */
export function sitePages(srcDir: string): string[] {
  const docs = (readdirSync(join(srcDir, DOCS), { recursive: true }) as string[])
    .filter((f) => f.endsWith('.md'))
    .map((f) => `${DOCS}/${f.split(sep).join('/')}`);
  return [HOME, ...(existsSync(join(srcDir, CHANGELOG)) ? [CHANGELOG] : []), ...docs].sort();
}

/** A page's title: its first level-1 heading, as the sidebar lists it. */
function titleOf(srcDir: string, page: string): string {
  const heading = /^# (.+)$/m.exec(readFileSync(join(srcDir, page), 'utf8'))?.[1] ?? page;
  return heading.replace(/`/g, '');
}

const linkOf = (page: string): string => `/${page === HOME ? '' : page.replace(/\.md$/, '')}`;

function sidebar(srcDir: string, pages: readonly string[]): DefaultTheme.SidebarItem[] {
  const item = (page: string): DefaultTheme.SidebarItem => ({ text: titleOf(srcDir, page), link: linkOf(page) });
  const guides = pages.filter((p) => dirname(p) === DOCS);
  const decisions = pages.filter((p) => p.startsWith(`${DOCS}/adr/`));
  return [
    { text: 'banlieue', items: [{ text: 'Overview', link: '/' }, ...guides.map(item)] },
    { text: 'Architecture decisions', collapsed: true, items: decisions.map(item) },
    ...(pages.includes(CHANGELOG) ? [{ text: 'Changelog', link: linkOf(CHANGELOG) }] : []),
  ];
}

/**
 * Points a link to a file of the checkout that is no page (an example, a
 * source file, a folder) at the repository, where it can be read; throws, so
 * failing the build, for a link to a file that does not exist.
 */
function repositoryLinks(md: MarkdownRenderer, srcDir: string, pages: ReadonlySet<string>): void {
  md.core.ruler.push('repository-links', (state) => {
    const env = state.env as { realPath?: string; path?: string };
    const source = env.realPath ?? env.path ?? '';
    for (const token of state.tokens.flatMap((t) => t.children ?? [])) {
      const href = token.type === 'link_open' ? token.attrGet('href') : null;
      if (href === null || /^([a-z][a-z0-9+.-]*:|#|\/)/i.test(href)) continue;
      const [path = ''] = href.split('#');
      const target = relative(srcDir, resolve(dirname(source), decodeURIComponent(path)));
      if (pages.has(target.split(sep).join('/'))) continue;
      if (target.startsWith('..') || !existsSync(join(srcDir, target))) {
        throw new Error(`${relative(srcDir, source)}: link to ${href}, which names no page and no file of the repository`);
      }
      token.attrSet('href', `${REPOSITORY_URL}/${statSync(join(srcDir, target)).isDirectory() ? 'tree' : 'blob'}/main/${target.split(sep).join('/')}`);
    }
    return false;
  });
}

export function docsSiteConfig({ srcDir, outDir, cacheDir }: DocsSiteProps): UserConfig<DefaultTheme.Config> {
  const pages = sitePages(srcDir);
  // Everything else of the checkout is no page: each top-level entry but docs/, and the other Markdown files beside README.
  const others = readdirSync(srcDir, { withFileTypes: true })
    .filter((e) => (e.isDirectory() ? e.name !== DOCS : e.name.endsWith('.md') && !pages.includes(e.name)))
    .map((e) => (e.isDirectory() ? `${e.name}/**` : e.name));
  return {
    title: 'banlieue',
    description: 'Kubernetes-native virtual machines and a Cluster API v1beta2 infrastructure provider',
    srcDir,
    outDir,
    cacheDir,
    srcExclude: others,
    rewrites: { [HOME]: 'index.md' },
    // No request leaves the build or the reader's browser: local search, no fonts or scripts from elsewhere.
    themeConfig: {
      nav: [
        { text: 'Guides', link: '/docs/install' },
        { text: 'Compatibility', link: '/docs/compatibility' },
        { text: 'Changelog', link: linkOf(CHANGELOG) },
      ].filter((n) => pages.includes(`${n.link.slice(1)}.md`)),
      sidebar: sidebar(srcDir, pages),
      search: { provider: 'local' },
      socialLinks: [{ icon: 'github', link: REPOSITORY_URL }],
    },
    markdown: {
      config: (md) => {
        // VitePress lets any tag at the start of a line open an HTML block (for Vue components), which
        // cuts a paragraph at a wrapped `<placeholder>` in a code span; the docs hold no HTML blocks.
        md.block.ruler.disable('html_block');
        // Vue reads `{{ … }}` in the page as an interpolation; in inline code it is text (cloud-init's Jinja).
        const codeInline = md.renderer.rules.code_inline;
        md.renderer.rules.code_inline = (tokens, idx, options, env, self) => {
          tokens[idx]?.attrSet('v-pre', '');
          return codeInline ? codeInline(tokens, idx, options, env, self) : self.renderToken(tokens, idx, options);
        };
        repositoryLinks(md, srcDir, new Set(pages));
      },
    },
  };
}
