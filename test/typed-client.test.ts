/**
 * What an integrator does with the OpenAPI document: generate types with openapi-typescript,
 * write a client with openapi-fetch under TypeScript's `strict`, and run it. The program
 * (test/typed-client/drive-a-job.ts) is typechecked with TypeScript 7 against the types made
 * from the live document, then run against the service on a loopback port, its responses
 * checked against the document as every in-process response is.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { copyFileSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import openapiTS, { astToString } from 'openapi-typescript'
import { startTestApi, type TestApi } from './kit'
import { CLOSED_TARGET } from './resources'
import { addUnit } from '../src/units/add-unit'
import { createCommercialAccount } from '../src/commercial-accounts/create-commercial-account'

const ROOT = resolve(import.meta.dir, '..')
let api: TestApi
let server: ReturnType<typeof Bun.serve>
let dir: string

beforeAll(() => {
  api = startTestApi({ TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1', TOWLINE_WEBHOOK_TIMEOUT_MS: '500' })
  server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => api.raw(request) })
  dir = mkdtempSync(join(tmpdir(), 'towline-typed-client-'))
})
afterAll(async () => {
  await server?.stop(true)
  api?.close()
  rmSync(dir, { recursive: true, force: true })
})

test("a client generated from the document typechecks under strict with no casts and drives a job's whole life", async () => {
  const doc = await (await fetch(`${server.url}api/v1/openapi.json`)).json()
  writeFileSync(join(dir, 'towline.d.ts'), astToString(await openapiTS(doc)))
  copyFileSync(join(ROOT, 'test/typed-client/drive-a-job.ts'), join(dir, 'drive-a-job.ts'))
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      strict: true, noEmit: true, target: 'ES2022', module: 'preserve', moduleResolution: 'bundler',
      lib: ['ES2022', 'DOM'], types: [], skipLibCheck: false, noUnusedLocals: true,
    },
    files: ['drive-a-job.ts'],
  }))
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
  const tsc = Bun.spawnSync(['node', join(ROOT, 'node_modules/typescript-native/bin/tsc'), '-p', join(dir, 'tsconfig.json')], { stdout: 'pipe', stderr: 'pipe' })
  expect({ exit: tsc.exitCode, errors: `${tsc.stdout}${tsc.stderr}`.trim() }).toEqual({ exit: 0, errors: '' })

  const unit = addUnit(api.db, api.clock, { accountId: api.accountId, name: 'Truck 7', driverName: 'Bo Diaz', driverPhone: '+15035550188' })
  const { driveAJob } = await import(join(dir, 'drive-a-job.ts'))
  const club = createCommercialAccount(api.contexts.forOperator(api.accountId), { name: 'AAA Oregon', kind: 'motor_club', contacts: [{ name: 'Dispatch desk', phone: '+15035550150' }], rates: 'hook 95.00' })
  const trip = await driveAJob(`${server.url}api/v1`, api.key('all'), unit.id, CLOSED_TARGET, club.id)
  expect(trip).toEqual({
    scopes: expect.arrayContaining(['jobs:read', 'jobs:write', 'webhooks:manage']),
    readsPerMinute: 600,
    jobId: expect.stringMatching(/^job_/),
    replayed: true,
    positionShown: false,
    statuses: ['confirmed', 'dispatched', 'en_route', 'on_scene', 'towing', 'at_destination', 'completed', 'confirmed', 'confirmed'],
    refusal: 'job_transition_refused',
    refusalStatus: 409,
    reopenCount: 1,
    quoteCents: 12500,
    eventTypes: expect.arrayContaining(['job.created', 'job.assigned', 'job.status_changed', 'job.payment_updated', 'job.note_added', 'job.reopened', 'job.unassigned']),
    sequences: expect.any(Array),
    texts: expect.any(Number),
    listed: true,
    services: 0,
    pausedReason: 'manual',
    deliveries: 2,
    deleted: true,
    commercialAccount: 'AAA Oregon',
    directory: [{ name: 'AAA Oregon', kind: 'motor_club', contacts: 1 }],
    clearedCommercialAccount: true,
  })
  expect(trip.sequences).toEqual(trip.sequences.map((_: number, i: number) => i + 1))
  expect(trip.texts).toBeGreaterThan(0)
}, 30_000)
