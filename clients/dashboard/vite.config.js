// One web package, two builds from the same modules (`npm run build` makes both):
//   dist/         the dashboard (index.html -> src/dashboard.js), for `hemra serve --ui clients/dashboard/dist`
//   dist/viewer/  the trace viewer (viewer/index.html -> src/viewer.js), which the gateway serves by
//                 default from its committed copy in gateway/viewer (`make viewer` refreshes it)
// Both are plain files loaded from the page's own origin: the gateway's CSP allows no inline
// script or style, and no CDN.
import { defineConfig } from 'vite';

// KaTeX's stylesheet names each font three times (woff2, woff, ttf); every browser the
// dashboard supports reads woff2, so only those are bundled (and committed in gateway/viewer).
const woff2Only = {
  name: 'katex-woff2-only',
  enforce: 'pre',
  transform(code, id) {
    if (!/katex(\.min)?\.css$/.test(id)) return null;
    return code.replace(/,\s*url\([^)]+\.(woff|ttf)\)\s*format\("(woff|truetype)"\)/g, '');
  },
};

const plainFiles = {
  // No inline module-preload polyfill, no inlined assets: everything is a file of its own.
  modulePreload: { polyfill: false },
  assetsInlineLimit: 0,
  sourcemap: false,
};

const dashboard = {
  base: '/',
  plugins: [woff2Only],
  build: { ...plainFiles, outDir: 'dist', emptyOutDir: true },
  server: {
    // `npm run dev` forwards the API to a `hemra serve` on its default address.
    proxy: { '/api': 'http://127.0.0.1:7878' },
  },
};

// The viewer ships inside the Python package, so its files have fixed names, are left
// readable (not minified) and sit in one folder served at any path (relative base).
const viewer = {
  root: 'viewer',
  base: './',
  publicDir: '../public',
  plugins: [woff2Only],
  build: {
    ...plainFiles,
    outDir: '../dist/viewer',
    emptyOutDir: true,
    minify: false,
    rolldownOptions: {
      output: {
        entryFileNames: 'app.js',
        // KaTeX (loaded only on pages with math) is a chunk of its own, its stylesheet and
        // fonts files beside it, in the one folder (package data is viewer/*): fixed names
        // too, so the committed copy changes only with them.
        chunkFileNames: '[name].js',
        assetFileNames: (asset) => ((asset.names || []).some((n) => /^(viewer|index|app)\.css$/.test(n)) ? 'app[extname]' : '[name][extname]'),
        postBanner: '// Built from clients/dashboard (src/viewer.js) by `make viewer`: edit the sources, not this file.',
      },
    },
  },
};

export default defineConfig(({ mode }) => (mode === 'viewer' ? viewer : dashboard));
