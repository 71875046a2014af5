/**
 * Webhook targets on loopback written in disguise, against the compiled binary run as an
 * operator would (no TOWLINE_WEBHOOK_ALLOW_PRIVATE). The receiver is a real HTTPS server on
 * 127.0.0.1 whose certificate also names ::ffff:127.0.0.1, so only the address check stands
 * between a disguised target and it.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { apiCaller, createKeyWithCli, freshFolder, startServer, type RunningServer } from '../binary'
import { makeTestCa, startReceiver } from '../https-receiver'

const ca = makeTestCa()
const receiver = startReceiver(ca, { behave: () => ({ body: 'LOOPBACK SECRET' }) })
const port = receiver.port
const DISGUISED = [`https://[::ffff:127.0.0.1]:${port}/`, `https://[::ffff:7f00:1]:${port}/`, `https://2130706433:${port}/`, `https://0x7f.1:${port}/`, `https://localhost.:${port}/`]
let folder: ReturnType<typeof freshFolder>
let key: string
let server: RunningServer | undefined
const env = { NODE_EXTRA_CA_CERTS: ca.caPath }

beforeAll(async () => {
  folder = freshFolder()
  server = await startServer(folder.bin, { cwd: folder.dir, env })
  key = createKeyWithCli(folder.bin, folder.dir, 'all')
})
afterAll(async () => {
  await server?.stop()
  receiver.stop()
  folder?.cleanup()
})

const call = apiCaller(() => server!, () => key)

describe('loopback targets in disguise', () => {
  test('are refused with 422 on url at POST /webhooks', async () => {
    for (const url of DISGUISED) {
      const r = await call('POST', '/webhooks', { url, events: ['*'] })
      expect({ url, status: r.status, code: r.body.error?.code, path: r.body.error?.details?.fields?.[0]?.path }).toEqual({ url, status: 422, code: 'validation_failed', path: 'url' })
    }
    expect((await call('GET', '/webhooks')).body.data).toEqual([])
    await server!.stop()
  })

  test('an endpoint saved while the operator allowed private targets is never reached once they no longer do', async () => {
    // With the flag, the endpoints are accepted and a ping reaches the receiver: the setup can reach it.
    server = await startServer(folder.bin, { cwd: folder.dir, env: { ...env, TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' } })
    const ids: string[] = []
    for (const url of [...DISGUISED, `https://127.0.0.1:${port}/`]) {
      const r = await call('POST', '/webhooks', { url, events: ['ping'] })
      expect(r.status).toBe(201)
      ids.push(r.body.id)
    }
    const allowedPing = await call('POST', `/webhooks/${ids.at(-1)}/test`)
    expect(allowedPing.body).toMatchObject({ delivered: true, response_body: 'LOOPBACK SECRET' })
    await server.stop()

    // Same database, flag off: every ping is blocked before anything is sent.
    server = await startServer(folder.bin, { cwd: folder.dir, env })
    const before = receiver.received.length
    for (const id of ids) {
      const ping = await call('POST', `/webhooks/${id}/test`)
      expect(ping.status).toBe(200)
      expect(ping.body).toMatchObject({ delivered: false, response_status: null, response_body: null, error: 'blocked' })
      expect(JSON.stringify(ping.body)).not.toContain('LOOPBACK SECRET')
    }
    expect(receiver.received.length).toBe(before)
    const log = (await call('GET', `/webhooks/${ids[0]}/deliveries`)).body.data
    expect(log[0]).toMatchObject({ event_type: 'ping', status: 'failed', error: 'blocked', response_body: null })
  })
})
