import { Elysia } from 'elysia'
import { dirname, join } from 'node:path'
import { compressedOnce, pickCoding } from './compress'
import { pagePolicy } from './security-headers'
import { COMPILED } from './compiled'

/**
 * Where the Scalar reference bundle is: embedded in the compiled binary (scripts/build.ts passes
 * it with --asset), or in the installed @scalar/api-reference package when run from source or
 * bunx. Served from this server, so the docs page works with no internet access.
 */
function scalarScriptPath(): string {
  if (COMPILED) return join(import.meta.dir, 'scalar', 'standalone.js')
  return join(dirname(Bun.resolveSync('@scalar/api-reference', import.meta.dir)), 'browser', 'standalone.js')
}
const scalarJs = scalarScriptPath()
const scalarJsCompressed = compressedOnce(async () => new Uint8Array(await Bun.file(scalarJs).arrayBuffer()))
const SCRIPT_HEADERS = { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=86400', vary: 'accept-encoding' }

/** The 4.3 MB reference script, brotli or gzip (about 1 MB) when the client accepts it. */
async function scalarScript(acceptEncoding: string | null): Promise<Response> {
  const coding = pickCoding(acceptEncoding)
  if (coding) {
    try {
      return new Response(await scalarJsCompressed(coding), { headers: { ...SCRIPT_HEADERS, 'content-encoding': coding } })
    } catch { /* fall through: the uncompressed file always works */ }
  }
  return new Response(Bun.file(scalarJs), { headers: SCRIPT_HEADERS })
}

const DOCS_HTML = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Towline API reference</title>
    <style>body { margin: 0; }</style>
  </head>
  <body>
    <script id="api-reference" data-url="/api/v1/openapi.json" data-configuration='${JSON.stringify({
      withDefaultFonts: false,
      telemetry: false,
      // The page is offline: no buttons that lead to Scalar's cloud (its AI agent, MCP
      // generator, deploy/share toolbar, "open in the Scalar app").
      hideClientButton: true,
      showDeveloperTools: 'never',
      agent: { disabled: true },
      mcp: { disabled: true },
      authentication: { preferredSecurityScheme: 'bearerAuth' },
    })}'></script>
    <script src="/api/v1/docs/scalar.js"></script>
  </body>
</html>`

/** The reference page's own policy: the page policy with inline styles (Scalar's components set them) and data: fonts; no map tiles. */
const DOCS_POLICY = pagePolicy({ tileUrl: null, loosen: { 'style-src': "'self' 'unsafe-inline'", 'font-src': "'self' data:" } })

/** The OpenAPI document and the interactive reference page (served with no auth). */
export function docsRoutes(getDocument: () => unknown) {
  let cached: string | undefined
  return new Elysia({ prefix: '/api/v1' })
    .get('/openapi.json', () => {
      cached ??= JSON.stringify(getDocument())
      return new Response(cached, { headers: { 'content-type': 'application/json; charset=utf-8' } })
    }, { detail: { hide: true } })
    .get('/docs', () => new Response(DOCS_HTML, { headers: { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': DOCS_POLICY } }), { detail: { hide: true } })
    .get('/docs/scalar.js', ({ request }) => scalarScript(request.headers.get('accept-encoding')), { detail: { hide: true } })
}
