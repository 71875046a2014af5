/**
 * Two processes making one new database with different key files at once (two `serve`s, or a
 * serve and a console command run from another folder): the first to name its key wins, and the
 * other is refused before it seals anything, its new key file removed. Real SQLite files.
 */
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { closeDatabase, openDatabase, type Db } from './client'
import { linkKeyCheck, openLinkKey, recordLinkKey } from './link-key'
import { migrateDatabase } from './migrate'
import { SealKeyError } from '../platform/sealed'

let dir: string
let dbs: Db[]
beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'towline-link-key-')); dbs = [] })
afterEach(() => { for (const db of dbs) closeDatabase(db); rmSync(dir, { recursive: true, force: true }) })

const open = () => { const db = openDatabase(join(dir, 'new.db')); dbs.push(db); return db }

test('both open a new database before either names a key: the second to record is refused and its key file goes', () => {
  const [first, second] = [open(), open()]
  const a = openLinkKey(first, join(dir, 'a.key'))
  const b = openLinkKey(second, join(dir, 'b.key'))
  expect([a.created, b.created]).toEqual([true, true])
  migrateDatabase(first, { linkKey: () => a.key })
  migrateDatabase(second, { linkKey: () => b.key })
  recordLinkKey(first, join(dir, 'a.key'), a, 1)
  expect(() => recordLinkKey(second, join(dir, 'b.key'), b, 2)).toThrow(SealKeyError)
  expect([existsSync(join(dir, 'a.key')), existsSync(join(dir, 'b.key'))]).toEqual([true, false])
  expect(first.$client.query('SELECT link_key_check AS c FROM installation').all()).toEqual([{ c: linkKeyCheck(a.key) }])
  // From now on only a.key opens it; recording it again changes nothing.
  expect(() => openLinkKey(open(), join(dir, 'b.key'))).toThrow(/is missing/)
  const again = openLinkKey(open(), join(dir, 'a.key'))
  expect(again).toEqual({ key: a.key, created: false })
  recordLinkKey(dbs.at(-1)!, join(dir, 'a.key'), again, 3)
})
