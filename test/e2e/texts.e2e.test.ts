/**
 * Texts end to end: the compiled binary sending through a local stand-in speaking Twilio's
 * Messages API (TOWLINE_TWILIO_API_BASE), consent, STOP/START/HELP, replies, delivery
 * reports, retries, and a SIGKILL mid-send.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { cli, createKeyWithCli, freePort, freshFolder, startServer, type RunningServer } from '../binary'
import { sendInbound, startTwilioStandin, TWILIO_FROM, TWILIO_SID, TWILIO_TOKEN, type Answer } from '../twilio-standin'

const answers = new Map<string, Answer>()
const twilio = startTwilioStandin({ answer: (to) => answers.get(to) ?? 'ok' })
let folder: ReturnType<typeof freshFolder>
let server: RunningServer
let key: string
let unit: { id: string }

function envFor(port: number) {
  return {
    TOWLINE_SMS_PROVIDER: 'twilio', TWILIO_ACCOUNT_SID: TWILIO_SID, TWILIO_AUTH_TOKEN: TWILIO_TOKEN, TWILIO_FROM,
    TOWLINE_TWILIO_API_BASE: twilio.apiBase, TOWLINE_SMS_RETRY_SCHEDULE: '100ms,200ms,300ms', TOWLINE_PUBLIC_URL: `http://127.0.0.1:${port}`,
  }
}
const start = (f: ReturnType<typeof freshFolder>, port: number) => startServer(f.bin, { cwd: f.dir, env: envFor(port), args: ['--port', String(port)] })

beforeAll(async () => {
  folder = freshFolder()
  const port = freePort()
  server = await start(folder, port)
  key = createKeyWithCli(folder.bin, folder.dir, 'all')
  unit = JSON.parse(cli(folder.bin, ['units', 'add', '--name', 'Truck 3', '--driver-phone', '503-555-0103', '--json'], { cwd: folder.dir }).stdout)
})
afterAll(async () => {
  await server?.stop()
  twilio.stop()
  folder?.cleanup()
})

async function call(method: string, path: string, body?: unknown) {
  const res = await fetch(server.api + path, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
  return { status: res.status, body: await res.json() as any }
}
const texts = (dir = folder.dir, job?: string) => JSON.parse(cli(folder.bin, ['texts', 'list', '--json', '--limit', '500', ...(job ? ['--job', job] : [])], { cwd: dir }).stdout).data as any[]
async function until(cond: () => boolean | Promise<boolean>, ms = 8000) {
  const end = Date.now() + ms
  while (!(await cond())) { if (Date.now() > end) throw new Error('condition not met in time'); await Bun.sleep(25) }
}
const to = (phone: string) => twilio.messages.filter((m) => m.to === phone)

describe('texts through Twilio', () => {
  test('creating a job texts the customer who consented, through the Messages API with basic auth', async () => {
    const job = (await call('POST', '/jobs', { customer: { name: 'Ann', phone: '503-555-0142', sms_consent: true }, pickup: { location: 'I-5 N mile 12' } })).body
    await until(() => to('+15035550142').length >= 1)
    const m = to('+15035550142')[0]!
    expect(m.from).toBe(TWILIO_FROM)
    expect(m.body).toContain(job.tracking_url)
    expect(m.body).toStartWith('My towing company:')
    expect(m.statusCallback).toBe(`${server.url}/sms/twilio/status`)
    await until(() => texts(folder.dir, job.id).some((t) => t.status === 'sent'))
    expect(texts(folder.dir, job.id)[0]).toMatchObject({ template: 'request_received', status: 'sent', provider: 'twilio', provider_message_id: m.sid })
    // The carrier reports delivery: the outbox row follows.
    expect((await twilio.report(m.sid, 'delivered')).status).toBe(204)
    expect(texts(folder.dir, job.id)[0]!.status).toBe('delivered')
  })

  test('a delivery report that arrives before Twilio has answered the send is kept and applied once the send is recorded', async () => {
    answers.set('+15035550139', 'delivered-first')
    const job = (await call('POST', '/jobs', { customer: { name: 'Cy', phone: '503-555-0139', sms_consent: true }, pickup: { location: 'x' } })).body
    await until(() => texts(folder.dir, job.id).some((t) => t.status !== 'queued' && t.status !== 'sending'))
    expect(texts(folder.dir, job.id)[0]).toMatchObject({ status: 'delivered', provider_message_id: to('+15035550139')[0]!.sid })
  })

  test('no consent, no text: the row is skipped with the reason', async () => {
    const job = (await call('POST', '/jobs', { customer: { name: 'Bo', phone: '503-555-0143' }, pickup: { location: 'x' } })).body
    // Skipped in the transaction that wrote it: it never was in the queue.
    expect(texts(folder.dir, job.id)[0]).toMatchObject({ status: 'skipped', skip_reason: 'no_consent' })
    // A later text to someone who agreed goes out; the skipped one still has not.
    await call('POST', '/jobs', { customer: { name: 'Bo2', phone: '503-555-0153', sms_consent: true }, pickup: { location: 'x' } })
    await until(() => to('+15035550153').length >= 1)
    expect(to('+15035550143')).toHaveLength(0)
  })

  test('assigning sends the driver the job link; status changes text the customer', async () => {
    const job = (await call('POST', '/jobs', { customer: { name: 'Cy', phone: '503-555-0144', sms_consent: true }, pickup: { location: 'Costco lot' } })).body
    await call('POST', `/jobs/${job.id}/assign`, { unit_id: unit.id })
    await until(() => to('+15035550103').length >= 1 && to('+15035550144').length >= 2)
    expect(to('+15035550103')[0]!.body).toMatch(/Open: http:\/\/127\.0\.0\.1:\d+\/d\/[0-9A-Za-z]+/)
    expect(to('+15035550144').map((m) => m.body).join('\n')).toContain('assigned')
  })

  test('a provider error is retried; an invalid number fails without retrying', async () => {
    answers.set('+15035550145', 'error500')
    const a = (await call('POST', '/jobs', { customer: { name: 'Di', phone: '503-555-0145', sms_consent: true }, pickup: { location: 'x' } })).body
    await until(() => twilio.creates.filter((c) => c.to === '+15035550145').length >= 2)
    answers.set('+15035550145', 'ok')
    await until(() => texts(folder.dir, a.id)[0]?.status === 'sent')
    expect(texts(folder.dir, a.id)[0]!.attempts).toBeGreaterThanOrEqual(3)
    answers.set('+15035550146', 'invalid')
    const b = (await call('POST', '/jobs', { customer: { name: 'Ed', phone: '503-555-0146', sms_consent: true }, pickup: { location: 'x' } })).body
    await until(() => texts(folder.dir, b.id)[0]?.status === 'failed')
    // A later text to that number goes out after it (texts to one number keep their order): the failed one was not retried.
    answers.set('+15035550146', 'ok')
    await call('PATCH', `/jobs/${b.id}`, { status: 'cancelled', cancel_reason: 'customer left' })
    await until(() => texts(folder.dir, b.id).some((t) => t.template === 'status_cancelled' && t.status === 'sent'))
    expect(twilio.creates.filter((c) => c.to === '+15035550146').map((c) => c.answer)).toEqual(['invalid', 'ok'])
    expect(texts(folder.dir, b.id).find((t) => t.template === 'request_received')!.error).toContain('21211')
  })

  test('a number that unsubscribed at Twilio (21610) is recorded as opted out and not texted again', async () => {
    answers.set('+15035550152', 'unsubscribed')
    const job = (await call('POST', '/jobs', { customer: { name: 'Ko', phone: '503-555-0152', sms_consent: true }, pickup: { location: 'x' } })).body
    await until(() => texts(folder.dir, job.id)[0]?.status === 'skipped')
    expect(texts(folder.dir, job.id)[0]).toMatchObject({ skip_reason: 'opted_out', error: expect.stringContaining('21610') })
    const consent = JSON.parse(cli(folder.bin, ['texts', 'consent', '--phone', '+15035550152', '--json'], { cwd: folder.dir }).stdout).data
    expect(consent).toEqual([expect.objectContaining({ texts: 'opted_out', opt_out_source: 'twilio:21610' })])
    await call('PATCH', `/jobs/${job.id}`, { status: 'cancelled', cancel_reason: 'customer left' })
    expect(texts(folder.dir, job.id).find((t) => t.template === 'status_cancelled')).toMatchObject({ status: 'skipped', skip_reason: 'opted_out' })
    expect(twilio.creates.filter((c) => c.to === '+15035550152')).toHaveLength(1)
  })
})

describe('inbound texts', () => {
  test('an incorrectly signed request is refused and changes nothing', async () => {
    const job = (await call('POST', '/jobs', { customer: { name: 'Fa', phone: '503-555-0147', sms_consent: true }, pickup: { location: 'x' } })).body
    const res = await sendInbound(server.url, '+15035550147', 'STOP', { signature: 'bm90LWEtc2lnbmF0dXJl' })
    expect(res.status).toBe(403)
    await call('PATCH', `/jobs/${job.id}`, { status: 'cancelled', cancel_reason: 'customer left' })
    await until(() => to('+15035550147').length >= 2)
  })

  test('STOP revokes consent for that number; START restores it; HELP answers', async () => {
    const job = (await call('POST', '/jobs', { customer: { name: 'Gi', phone: '503-555-0148', sms_consent: true }, pickup: { location: 'x' } })).body
    await until(() => to('+15035550148').length >= 1)
    expect((await sendInbound(server.url, '+15035550148', 'Stop')).status).toBe(200)
    const driverTexts = to('+15035550103').length
    await call('POST', `/jobs/${job.id}/assign`, { unit_id: unit.id })
    expect(texts(folder.dir, job.id).find((t) => t.template === 'status_dispatched')).toMatchObject({ status: 'skipped', skip_reason: 'opted_out' })
    // The driver's text of the same assignment arrives; the customer's never comes.
    await until(() => to('+15035550103').length > driverTexts)
    expect(to('+15035550148')).toHaveLength(1)
    const help = await sendInbound(server.url, '+15035550148', 'HELP')
    expect(help.headers.get('content-type')).toContain('xml')
    expect(await help.text()).toMatch(/<Response><Message>My towing company: .*STOP.*<\/Message><\/Response>/)
    const consent = () => JSON.parse(cli(folder.bin, ['texts', 'consent', '--phone', '503-555-0148', '--json'], { cwd: folder.dir }).stdout).data
    expect(consent()).toEqual([expect.objectContaining({ phone: '+15035550148', texts: 'opted_out', opt_out_source: 'sms:STOP', consent_source: expect.stringMatching(/^api:key_/) })])
    await sendInbound(server.url, '+15035550148', 'START')
    expect(consent()).toEqual([expect.objectContaining({ texts: 'allowed', consent_source: 'sms:START', opted_out_at: null })])
    await call('PATCH', `/jobs/${job.id}`, { status: 'en_route' })
    await until(() => to('+15035550148').length >= 2)
    // A customer who phones in to stop texts is opted out by the operator the same way.
    cli(folder.bin, ['texts', 'consent', '--stop', '(503) 555-0148'], { cwd: folder.dir })
    expect(consent()).toEqual([expect.objectContaining({ texts: 'opted_out', opt_out_source: 'cli' })])
    await call('PATCH', `/jobs/${job.id}`, { status: 'on_scene' })
    await until(() => texts(folder.dir, job.id).some((t) => t.template === 'status_on_scene' && t.skip_reason === 'opted_out'))
    expect(to('+15035550148')).toHaveLength(2)
  })

  test('a reply lands on the customer\'s open job as job.customer_message', async () => {
    const job = (await call('POST', '/jobs', { customer: { name: 'Hu', phone: '503-555-0149', sms_consent: true }, pickup: { location: 'x' } })).body
    expect((await sendInbound(server.url, '+15035550149', 'I am at the blue gas station')).status).toBe(200)
    const events = (await call('GET', `/jobs/${job.id}/events`)).body.data
    expect(events.at(-1)).toMatchObject({ type: 'job.customer_message', actor: 'customer', detail: { text: 'I am at the blue gas station', from: '+15035550149' } })
  })
})

describe('two accounts, one customer', () => {
  const BAY = '+15035550777'
  let bayKey: string
  let bayId: string
  beforeAll(() => {
    const run = (args: string[]) => {
      const r = cli(folder.bin, [...args, '--json'], { cwd: folder.dir })
      expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: '' })
      return JSON.parse(r.stdout)
    }
    bayId = run(['accounts', 'create', '--name', 'Bay Towing', '--phone', '503-555-0700']).id
    expect(run(['accounts', 'update', bayId, '--sms-from', '(503) 555-0777'])).toMatchObject({ id: bayId, sms_from: BAY, phone: '+15035550700' })
    bayKey = createKeyWithCli(folder.bin, folder.dir, 'all', ['--account', bayId])
  })
  const as = async (k: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(server.api + path, { method, headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
    return { status: res.status, body: await res.json() as any }
  }
  const said = async (k: string, jobId: string) => ((await as(k, 'GET', `/jobs/${jobId}/events?limit=100`)).body.data as any[])
    .filter((e) => e.type === 'job.customer_message').map((e) => e.detail.text)
  const newJob = async (k: string, phone: string) => {
    const res = await as(k, 'POST', '/jobs', { customer: { name: 'Lu', phone, sms_consent: true }, pickup: { location: 'x' } })
    expect(res.status).toBe(201)
    return res.body
  }

  test('each account texts from its own number; replies go back by the number they were sent to; a retry is one event', async () => {
    const jobA = await newJob(key, '503-555-0170')
    const jobB = await newJob(bayKey, '503-555-0170')
    await until(() => to('+15035550170').length >= 2)
    expect(to('+15035550170').map((m) => [m.from, m.body.split(':')[0]]).sort()).toEqual([[TWILIO_FROM, 'My towing company'], [BAY, 'Bay Towing']])
    await until(() => texts(folder.dir, jobB.id)[0]?.status === 'sent')
    const sid = 'SM' + 'b'.repeat(32)
    const first = await sendInbound(server.url, '+15035550170', 'At the Bay rest stop', { to: BAY, sid })
    const retry = await sendInbound(server.url, '+15035550170', 'At the Bay rest stop', { to: BAY, sid })
    expect([first.status, retry.status]).toEqual([200, 200])
    expect(await retry.text()).toBe(await first.text())
    expect(await said(bayKey, jobB.id)).toEqual(['At the Bay rest stop'])
    expect(await said(key, jobA.id)).toEqual([])
    await sendInbound(server.url, '+15035550170', 'Which truck is coming?')
    expect(await said(key, jobA.id)).toEqual(['Which truck is coming?'])
    expect(await said(bayKey, jobB.id)).toEqual(['At the Bay rest stop'])
  })

  test('HELP names the company that texted them from that number; STOP there opts out of that account only', async () => {
    const jobA = await newJob(key, '503-555-0171')
    const jobB = await newJob(bayKey, '503-555-0171')
    await until(() => to('+15035550171').length >= 2)
    expect(await (await sendInbound(server.url, '+15035550171', 'HELP', { to: BAY })).text()).toContain('<Message>Bay Towing (+15035550700): texts about your tow request.')
    expect(await (await sendInbound(server.url, '+15035550171', 'HELP')).text()).toContain('<Message>My towing company: texts about your tow request.')
    expect((await sendInbound(server.url, '+15035550171', 'STOP', { to: BAY })).status).toBe(200)
    const consent = (account?: string) => JSON.parse(cli(folder.bin, ['texts', 'consent', '--phone', '+15035550171', '--json', ...(account ? ['--account', account] : [])], { cwd: folder.dir }).stdout).data
    expect(consent(bayId)).toEqual([expect.objectContaining({ texts: 'opted_out', opt_out_source: 'sms:STOP' })])
    expect(consent()).toEqual([expect.objectContaining({ texts: 'allowed' })])
    await as(bayKey, 'PATCH', `/jobs/${jobB.id}`, { status: 'cancelled', cancel_reason: 'customer left' })
    await as(key, 'PATCH', `/jobs/${jobA.id}`, { status: 'cancelled', cancel_reason: 'customer left' })
    await until(() => to('+15035550171').length >= 3)
    await until(() => texts(folder.dir, jobB.id).some((t) => t.template === 'status_cancelled'))
    expect(texts(folder.dir, jobB.id).find((t) => t.template === 'status_cancelled')).toMatchObject({ status: 'skipped', skip_reason: 'opted_out' })
    // The one text after STOP came from the default number: Bay's cancellation was never sent.
    expect(to('+15035550171').filter((m) => m.from === BAY)).toHaveLength(1)
  })

  test('a customer only Bay texted, writing to the default number, is threaded nowhere and logged', async () => {
    const jobB = await newJob(bayKey, '503-555-0172')
    await until(() => to('+15035550172').length >= 1)
    const res = await sendInbound(server.url, '+15035550172', 'Is anyone there?')
    expect(await res.text()).toBe('<?xml version="1.0" encoding="UTF-8"?><Response></Response>')
    expect(await said(bayKey, jobB.id)).toEqual([])
    await until(() => server.stdout().includes('+1******0172'))
    const line = JSON.parse(server.stdout().split('\n').find((l) => l.includes('+1******0172') && l.includes('not threaded'))!)
    expect(line).toMatchObject({ level: 40, to: TWILIO_FROM, body: 'Is anyone there?' })
  })
})

test('a text caught mid-send by SIGKILL is found at the provider after restart, not sent twice', async () => {
  const f = freshFolder()
  const port = freePort()
  let s = await start(f, port)
  try {
    const k = createKeyWithCli(f.bin, f.dir, 'all')
    answers.set('+15035550150', 'hang')
    await fetch(s.api + '/jobs', { method: 'POST', headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' }, body: JSON.stringify({ customer: { name: 'Io', phone: '503-555-0150', sms_consent: true }, pickup: { location: 'x' } }) })
    await until(() => to('+15035550150').length >= 1)
    s.proc.kill('SIGKILL')
    await s.proc.exited
    expect(texts(f.dir)[0]).toMatchObject({ status: 'sending' })
    answers.set('+15035550150', 'ok')
    s = await start(f, port)
    await until(() => texts(f.dir)[0]?.status === 'sent')
    expect(texts(f.dir)[0]!.provider_message_id).toBe(to('+15035550150')[0]!.sid)
    // A later text to the same number goes out after it: the first one was not sent again meanwhile.
    const job = texts(f.dir)[0]!.job_id
    await fetch(`${s.api}/jobs/${job}`, { method: 'PATCH', headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' }, body: JSON.stringify({ status: 'cancelled', cancel_reason: 'customer left' }) })
    await until(() => to('+15035550150').length >= 2)
    expect(to('+15035550150').map((m) => m.body.includes('cancelled'))).toEqual([false, true])
  } finally {
    await s.stop()
    f.cleanup()
  }
}, 30_000)

test('with the default log provider nothing leaves the machine: texts are recorded, read on the job and in the CLI', async () => {
  const f = freshFolder()
  const s = await startServer(f.bin, { cwd: f.dir })
  try {
    const k = createKeyWithCli(f.bin, f.dir, 'all')
    const post = (path: string, body: unknown) => fetch(s.api + path, { method: 'POST', headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json() as Promise<any>)
    const job = await post('/jobs', { customer: { name: 'Jo', phone: '503-555-0151', sms_consent: true }, pickup: { location: 'Exit 12' } })
    const jobTexts = async () => (await (await fetch(`${s.api}/jobs/${job.id}/texts`, { headers: { authorization: `Bearer ${k}` } }).then((r) => r.json() as Promise<any>)).data) as any[]
    let seen: any[] = []
    await until(async () => (seen = await jobTexts())[0]?.status === 'sent')
    const created = (await fetch(`${s.api}/jobs/${job.id}/events`, { headers: { authorization: `Bearer ${k}` } }).then((r) => r.json() as Promise<any>)).data[0]
    expect(seen[0]).toMatchObject({ template: 'request_received', to: '+15035550151', status: 'sent', provider: 'log', event_id: created.id, attempts: 1 })
    expect(seen[0].body).toContain(job.tracking_url)
    expect(twilio.messages.filter((m) => m.to === '+15035550151')).toHaveLength(0)
    // Info lines reach stdout in batches (within 100 ms).
    await until(async () => (s.stdout() + s.stderr()).includes('text (log provider: not sent)'))
    const listed = JSON.parse(cli(f.bin, ['texts', 'list', '--json', '--job', job.id], { cwd: f.dir }).stdout).data
    expect(listed).toEqual(seen)
    expect(cli(f.bin, ['texts', 'list', '--job', job.id], { cwd: f.dir }).stdout).toContain('request_received')
    // A filter it cannot read is said (then the usage), not answered as an empty outbox.
    for (const [args, says] of [[['--status', 'bogus'], '--status must be one of queued, skipped, sending, sent, delivered, failed'], [['--limit', 'lots'], '--limit must be a whole number from 1 to 1000']] as const) {
      const r = cli(f.bin, ['texts', 'list', ...args], { cwd: f.dir })
      expect({ code: r.code, stdout: r.stdout, first: r.stderr.split('\n')[0] }).toEqual({ code: 2, stdout: '', first: expect.stringContaining(says) })
    }
    expect(cli(f.bin, ['texts', 'list', '--status', 'failed'], { cwd: f.dir }).stdout).toBe('No texts match.\n')
  } finally {
    await s.stop()
    f.cleanup()
  }
}, 30_000)
