/**
 * Loaded by bun test before every test file (bunfig.toml). bun test runs no process 'exit'
 * handlers, so the PostgreSQL clusters the tests started are stopped here, after the last test.
 * The tests run as on a machine set to UTC, whatever this one is set to: a new account takes the
 * machine's time zone, and the binaries the tests start inherit it. A test of another zone sets
 * the account's (or a child's TZ) itself.
 */
import { afterAll } from 'bun:test'
import { stopAllPgClusters } from './pg'

process.env.TZ = 'UTC'

afterAll(() => stopAllPgClusters())
