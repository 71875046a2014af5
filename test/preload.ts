/**
 * Loaded by bun test before every test file (bunfig.toml). bun test runs no process 'exit'
 * handlers, so the PostgreSQL clusters the tests started are stopped here, after the last test.
 */
import { afterAll } from 'bun:test'
import { stopAllPgClusters } from './pg'

afterAll(() => stopAllPgClusters())
