import { requestInfo } from './request-info'
import { dataResponseHeaders } from './security-headers'

/**
 * A GET the fetch handler answers before Elysia routes it (createFetchHandler's `preRouted`):
 * `exact` paths, and paths `under` a prefix whose rest is one plain segment (an id: letters,
 * digits, `_`). Each handler authorizes as its route does and builds the same response (tests
 * compare the two byte for byte); an error it throws is answered as the route's would be.
 */
export interface PreRouted {
  exact: ReadonlyMap<string, (request: Request) => Response>
  under: ReadonlyMap<string, (request: Request, segment: string) => Response>
}

/**
 * Returns how a pre-routed answer is built: the JSON text with the headers an authenticated API
 * route's answer has (made once; a Response copies them), the request id and the key's rate-limit headers.
 */
export function preRoutedJson(publicUrl: string): (request: Request, json: string) => Response {
  const fixed = new Headers({ 'content-type': 'application/json;charset=utf-8', ...dataResponseHeaders({ publicUrl }) })
  return (request, json) => {
    const info = requestInfo(request)
    const response = new Response(json, { headers: fixed })
    response.headers.set('request-id', info.requestId!)
    if (info.headers) for (const name in info.headers) response.headers.set(name, info.headers[name]!)
    return response
  }
}
