// The dashboard builds to dist/ as plain files: one script and one stylesheet, both loaded
// from the page's own origin (the gateway's CSP allows no inline script or style, and no CDN).
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // No inline module-preload polyfill, no inlined assets: everything is a file of its own.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
  },
  server: {
    // `npm run dev` forwards the API to a `hemra serve` on its default address.
    proxy: { '/api': 'http://127.0.0.1:7878' },
  },
});
