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
