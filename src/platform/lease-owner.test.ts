/**
 * Which lease holders a starting process may take over at once: its own machine's, whose
 * process is gone. Real processes: one alive, one killed and reaped, one killed but not yet
 * reaped by its parent (a zombie, as under a supervisor that has not waited for it yet).
 */
import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { isGoneLocalOwner } from './lease-owner'

const host = hostname()
const self = `${host}:${process.pid}`

test('a live process of this machine holds its leases; one on another machine is never judged from here', () => {
  const alive = Bun.spawn(['sleep', '30'])
  try {
    expect(isGoneLocalOwner(`${host}:${alive.pid}`, self)).toBe(false)
    expect(isGoneLocalOwner(`another-machine:${alive.pid}`, self)).toBe(false)
  } finally {
    alive.kill()
  }
})

test('a killed process is gone once reaped, and already while its parent has not reaped it (a zombie)', async () => {
  const reaped = Bun.spawn(['sleep', '30'])
  reaped.kill('SIGKILL')
  await reaped.exited
  expect(isGoneLocalOwner(`${host}:${reaped.pid}`, self)).toBe(true)

  // The inner sleep's parent becomes `sleep 60`, which never waits for it: killed, it stays a zombie.
  const parent = Bun.spawn(['sh', '-c', 'sleep 30 & echo $!; exec sleep 60'], { stdout: 'pipe' })
  try {
    const reader = parent.stdout.getReader()
    let out = ''
    while (!out.includes('\n')) {
      const { value, done } = await reader.read()
      if (done) break
      out += new TextDecoder().decode(value)
    }
    const pid = Number(out.trim())
    expect(pid).toBeGreaterThan(0)
    expect(isGoneLocalOwner(`${host}:${pid}`, self)).toBe(false)
    // Only once sh has become `sleep 60`: sh itself would reap its child.
    for (let i = 0; i < 200 && readFileSync(`/proc/${parent.pid}/comm`, 'utf8').trim() !== 'sleep'; i++) await Bun.sleep(5)
    process.kill(pid, 'SIGKILL')
    const stat = () => readFileSync(`/proc/${pid}/stat`, 'utf8')
    for (let i = 0; i < 200 && !stat().includes(') Z'); i++) await Bun.sleep(5)
    expect(stat()).toContain(') Z')
    expect(isGoneLocalOwner(`${host}:${pid}`, self)).toBe(true)
  } finally {
    parent.kill('SIGKILL')
  }
})
