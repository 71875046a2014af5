/**
 * Elysia writes a route's macro results (its `detail`: session role, body limits) into the options
 * object the route was given. Two routes given one object would share one `detail`, and the last
 * route's body limits would be every one's (the Settings forms all took 4 fields, so a fifth, the
 * page's version, was refused 400). Every route of the app keeps a `detail` of its own.
 */
import { expect, test } from 'bun:test'
import { startTestApi } from '../test/kit'

test('no two routes share their options: each has its own detail', () => {
  const api = startTestApi()
  try {
    const seen = new Map<object, string>()
    const shared: string[] = []
    for (const r of (api as unknown as { app: { routes: { method: string; path: string; hooks?: { detail?: object } }[] } }).app.routes) {
      const detail = r.hooks?.detail
      if (!detail) continue
      const other = seen.get(detail)
      if (other) shared.push(`${r.method} ${r.path} shares its options with ${other}`)
      else seen.set(detail, `${r.method} ${r.path}`)
    }
    expect(shared).toEqual([])
  } finally {
    api.close()
  }
})
