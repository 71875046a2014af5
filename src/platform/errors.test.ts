import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ERROR_CATALOG } from './errors'

describe('error catalog', () => {
  test('docs/errors.md lists every code of the catalog with its status, and no other', () => {
    const doc = readFileSync(join(import.meta.dir, '../../docs/errors.md'), 'utf8')
    const rows = [...doc.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1], Number(m[2])])
    const catalog = Object.entries(ERROR_CATALOG).map(([code, e]) => [code, e.status])
    expect(rows.sort()).toEqual(catalog.sort())
  })
})
