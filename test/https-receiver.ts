/**
 * A real HTTPS webhook receiver for tests: a CA made by the test (openssl), a server
 * certificate for 127.0.0.1/localhost signed by it (more on demand), and a Bun.serve that
 * verifies signatures and answers as told (status, delay, redirect, dropped connection).
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A server certificate and its key (PEM). */
export interface ServerCert { cert: string; key: string }

export interface TestCa extends ServerCert {
  dir: string
  caPath: string
  ca: string
  /** Issues another server certificate, for the names given as subjectAltName entries (`DNS:x`, `IP:y`). */
  issue(altNames: string[]): ServerCert
}

/**
 * Makes a throwaway CA and a server certificate for 127.0.0.1 and localhost; the certificate
 * also names ::ffff:127.0.0.1, so a target written in that disguise would get through TLS
 * and only the address check stands between it and the receiver.
 */
export function makeTestCa(): TestCa {
  const dir = mkdtempSync(join(tmpdir(), 'towline-ca-'))
  const run = (args: string[]) => {
    const r = Bun.spawnSync(['openssl', ...args], { cwd: dir, stderr: 'pipe' })
    if (r.exitCode !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr.toString()}`)
  }
  run(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=Towline Test CA'])
  let issued = 0
  const issue = (altNames: string[]): ServerCert => {
    const name = `server${issued++ || ''}`
    run(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${altNames[0]!.replace(/^\w+:/, '')}`])
    writeFileSync(join(dir, `${name}.cnf`), `subjectAltName=${altNames.join(',')}\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n`)
    run(['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.pem`, '-days', '2', '-extfile', `${name}.cnf`])
    return { cert: readFileSync(join(dir, `${name}.pem`), 'utf8'), key: readFileSync(join(dir, `${name}.key`), 'utf8') }
  }
  const server = issue(['IP:127.0.0.1', 'IP:::ffff:127.0.0.1', 'DNS:localhost'])
  return { dir, caPath: join(dir, 'ca.pem'), ca: readFileSync(join(dir, 'ca.pem'), 'utf8'), ...server, issue }
}

export interface Received {
  path: string
  headers: Record<string, string>
  raw: string
  body: any
  /** Signatures in the header that match one of the receiver's secrets. */
  validSignatures: number
  at: number
}

export type Behaviour = { status?: number; delayMs?: number; hold?: Promise<unknown>; redirectTo?: string; drop?: boolean; headers?: Record<string, string>; body?: string }

/** Verifies an X-SVC-Signature header against secrets (constant time, as receivers should). */
export function countValidSignatures(header: string, raw: string, secrets: string[]): number {
  const parts = header.split(',')
  const t = parts.find((p) => p.startsWith('t='))?.slice(2)
  let valid = 0
  for (const p of parts.filter((x) => x.startsWith('v1='))) {
    const given = Buffer.from(p.slice(3), 'hex')
    for (const s of secrets) {
      const want = createHmac('sha256', s).update(`${t}.${raw}`).digest()
      if (given.length === want.length && timingSafeEqual(given, want)) valid++
    }
  }
  return valid
}

/** Starts the receiver (on 127.0.0.1, any free port, the CA's server certificate unless told). `behave(req)` decides each answer; default 200. */
export function startReceiver(ca: TestCa, opts: { secrets?: () => string[]; behave?: (r: Received) => Behaviour; hostname?: string; port?: number; cert?: ServerCert | (ServerCert & { serverName?: string })[] } = {}) {
  const received: Received[] = []
  const waiters: { n: number; resolve: () => void }[] = []
  const server = Bun.serve({
    port: opts.port ?? 0,
    hostname: opts.hostname ?? '127.0.0.1',
    tls: opts.cert ?? { cert: ca.cert, key: ca.key },
    async fetch(req, srv) {
      const raw = await req.text()
      let body: any
      try { body = JSON.parse(raw) } catch { body = null }
      const headers = Object.fromEntries(req.headers)
      const r: Received = { path: new URL(req.url).pathname, headers, raw, body, validSignatures: countValidSignatures(headers['x-svc-signature'] ?? '', raw, opts.secrets?.() ?? []), at: Date.now() }
      received.push(r)
      for (const w of waiters.filter((w) => received.length >= w.n)) w.resolve()
      const b = opts.behave?.(r) ?? {}
      if (b.delayMs) await Bun.sleep(b.delayMs)
      if (b.hold) await b.hold
      if (b.drop) { srv.requestIP(req); throw new Error('dropped on purpose') }
      if (b.redirectTo) return new Response(null, { status: 302, headers: { location: b.redirectTo } })
      return new Response(b.body ?? JSON.stringify({ ok: (b.status ?? 200) < 300 }), { status: b.status ?? 200, headers: { 'content-type': 'application/json', ...(b.headers ?? {}) } })
    },
  })
  return {
    url: `https://127.0.0.1:${server.port}`,
    port: server.port as number,
    received,
    /** Resolves once `n` requests have arrived (rejects after `ms`). */
    waitFor(n: number, ms = 10_000): Promise<void> {
      if (received.length >= n) return Promise.resolve()
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`only ${received.length} of ${n} webhook requests arrived`)), ms)
        waiters.push({ n, resolve: () => { clearTimeout(timer); resolve() } })
      })
    },
    stop: () => server.stop(true),
  }
}

/** A TLS server that accepts the connection and hangs up as soon as the request arrives. */
export function startHangUpServer(ca: TestCa) {
  const listener = Bun.listen({
    hostname: '127.0.0.1',
    port: 0,
    tls: { cert: ca.cert, key: ca.key },
    socket: { data(socket) { socket.end() }, open() {}, close() {}, error() {} },
  })
  return { url: `https://127.0.0.1:${listener.port}`, stop: () => listener.stop(true) }
}
