// Builds src/ into dist/ for Django's staticfiles (settings.STATICFILES_DIRS holds dist/).
// Asset names carry content hashes; Django finds them through dist/.vite/manifest.json
// (labeling/templatetags/vite.py), so a new build never meets a stale browser cache.
import { defineConfig } from "vite";

export default defineConfig({
  // Django serves the files under STATIC_URL.
  base: "/static/",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    manifest: true,
    // Every asset its own file, none inlined as a data: URL (Vite inlines those under 4 KB,
    // one of KaTeX's fonts among them): the Content-Security-Policy allows only the site's
    // own files (annotator/settings.py SECURE_CSP).
    assetsInlineLimit: 0,
    rollupOptions: {
      // One entry per page family; templates name the entry they need.
      input: {
        main: "src/main.js", workspace: "src/workspace.js", dashboard: "src/dashboard.js",
        research: "src/research.js",
        quality: "src/quality.js", mymissed: "src/mymissed.js",
        audit: "src/audit.js", inbox: "src/inbox.js", project: "src/project.js",
      },
    },
  },
});
