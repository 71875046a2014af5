import { Elysia } from 'elysia'
import { dirname, join } from 'node:path'

/**
 * Where the Scalar reference bundle is: embedded in the compiled binary (scripts/build.ts passes
 * it with --asset), or in the installed @scalar/api-reference package when run from source or
 * bunx. Served from this server, so the docs page works with no internet access.
 */
function scalarScriptPath(): string {
  const compiled = import.meta.dir.startsWith('/$bunfs') || import.meta.dir.startsWith('B:/~BUN')
  if (compiled) return join(import.meta.dir, 'scalar', 'standalone.js')
  return join(dirname(Bun.resolveSync('@scalar/api-reference', import.meta.dir)), 'browser', 'standalone.js')
}
const scalarJs = scalarScriptPath()

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
      hideClientButton: false,
      telemetry: false,
      authentication: { preferredSecurityScheme: 'bearerAuth' },
    })}'></script>
    <script src="/api/v1/docs/scalar.js"></script>
  </body>
</html>`

/** The OpenAPI document and the interactive reference page (served with no auth). */
export function docsRoutes(getDocument: () => unknown) {
  let cached: string | undefined
  return new Elysia({ prefix: '/api/v1' })
    .get('/openapi.json', () => {
      cached ??= JSON.stringify(getDocument())
      return new Response(cached, { headers: { 'content-type': 'application/json; charset=utf-8' } })
    }, { detail: { hide: true } })
    .get('/docs', () => new Response(DOCS_HTML, { headers: { 'content-type': 'text/html; charset=utf-8' } }), { detail: { hide: true } })
    .get('/docs/scalar.js', () => new Response(Bun.file(scalarJs), {
      headers: { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=86400' },
    }), { detail: { hide: true } })
}
