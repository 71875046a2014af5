/**
 * The shared route checks: every operation in the OpenAPI document that names a scope must
 * answer 401 without a key and 403 insufficient_scope (naming that scope) to a key that has
 * every other scope. Routes added later are covered without touching the tests.
 */
import { expect } from 'bun:test'
import { SCOPES } from '../src/accounts/scopes'

export interface Operation { method: string; path: string; scope: string }

/** Lists every operation of the document with its required scope. */
export function operationsOf(doc: any): Operation[] {
  const ops: Operation[] = []
  for (const [path, methods] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(methods)) {
      ops.push({ method: method.toUpperCase(), path, scope: op['x-required-scope'] })
    }
  }
  return ops
}

/** Replaces `{param}` with a syntactically plausible id that does not exist, under /api/v1. */
export function concretePath(path: string): string {
  return '/api/v1' + path.replace(/\{([^}]+)\}/g, (_, name: string) => `${name === 'id' ? 'job' : name.replace(/_id$/, '')}_01ZZZZZZZZZZZZZZZZZZZZZZZZ`)
}

/** Runs the 401/403 checks on every operation; `send` performs one HTTP request. */
export async function checkEveryOperationNeedsItsScope(
  doc: any,
  send: (method: string, path: string, key: string | null) => Promise<Response>,
  keyWithout: (scope: string) => string,
) {
  const ops = operationsOf(doc)
  expect(ops.length).toBeGreaterThan(0)
  for (const op of ops) {
    expect({ op: `${op.method} ${op.path}`, scope: SCOPES.includes(op.scope as any) }).toEqual({ op: `${op.method} ${op.path}`, scope: true })
    const path = concretePath(op.path)
    const anon = await send(op.method, path, null)
    const anonBody = await anon.json()
    expect({ op: `${op.method} ${op.path}`, status: anon.status, code: anonBody.error?.code }).toEqual({ op: `${op.method} ${op.path}`, status: 401, code: 'unauthorized' })
    const res = await send(op.method, path, keyWithout(op.scope))
    const body = await res.json()
    expect({ op: `${op.method} ${op.path}`, status: res.status, code: body.error?.code, scope: body.error?.details?.required_scope })
      .toEqual({ op: `${op.method} ${op.path}`, status: 403, code: 'insufficient_scope', scope: op.scope })
  }
}

/** The `{params}` of a document path, in order. */
export const pathParams = (path: string) => [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!)

/**
 * The shared isolation check: every operation with a path id, called by a key holding every
 * scope, answers a resource of another account exactly as it answers an id that names
 * nothing (404 not_found, the same message but for the id), one parameter at a time with the
 * others naming the caller's own resources. `bodyFor` gives a body the operation accepts, so
 * that the 404 is what is tested; an operation without one fails here, naming it. Kinds in
 * `accountWide` (the commercial accounts directory, shared by every site) are left out when the
 * other resources are another site's rather than another account's.
 */
export async function checkOtherAccountsLookUnknown(
  doc: any,
  send: (method: string, path: string, body: unknown) => Promise<Response>,
  ids: { own: Record<string, string>; theirs: Record<string, string>; kindOf: (path: string, param: string) => string; unknownIdOf: (kind: string) => string; accountWide?: string[] },
  bodyFor: (method: string, path: string) => unknown,
) {
  const ops = operationsOf(doc).filter((op) => pathParams(op.path).length > 0)
  expect(ops.length).toBeGreaterThan(0)
  for (const op of ops) {
    const params = pathParams(op.path)
    const needsBody = doc.paths[op.path][op.method.toLowerCase()].requestBody !== undefined
    const body = bodyFor(op.method, op.path)
    expect({ op: `${op.method} ${op.path}`, validBody: !needsBody || body !== undefined }).toEqual({ op: `${op.method} ${op.path}`, validBody: true })
    for (const target of params) {
      const kind = ids.kindOf(op.path, target)
      if (ids.accountWide?.includes(kind)) continue
      expect({ op: `${op.method} ${op.path}`, kind, known: ids.theirs[kind] !== undefined }).toEqual({ op: `${op.method} ${op.path}`, kind, known: true })
      const build = (value: string) => '/api/v1' + op.path.replace(/\{([^}]+)\}/g, (_, p: string) => (p === target ? value : ids.own[ids.kindOf(op.path, p)]!))
      const theirsId = ids.theirs[kind]!
      const unknownId = ids.unknownIdOf(kind)
      const answers = []
      for (const [id, path] of [[theirsId, build(theirsId)], [unknownId, build(unknownId)]] as const) {
        const res = await send(op.method, path, body)
        const json: any = await res.json()
        answers.push({ status: res.status, code: json.error?.code, message: String(json.error?.message).replaceAll(id, '<id>'), details: JSON.stringify(json.error?.details ?? null).replaceAll(id, '<id>') })
      }
      const label = `${op.method} ${op.path} with another account's ${target}`
      expect({ label, ...answers[0] }).toEqual({ label, ...answers[1]!, status: 404, code: 'not_found' })
    }
  }
}
