import { describe, expect, test } from 'bun:test'
import { plainHttpBeyondThisMachine, publicUrlProblem } from './public-url'

describe('publicUrlProblem', () => {
  test('names phones cannot reach are unreachable, with the reason', () => {
    for (const url of ['http://localhost:8080', 'http://LOCALHOST.:8080', 'http://api.localhost', 'http://towline.local', 'https://tow.internal',
      'http://towserver:8080', 'https://tow.home.arpa']) {
      expect({ url, kind: publicUrlProblem(url)?.kind }).toEqual({ url, kind: 'unreachable' })
    }
    expect(publicUrlProblem('http://localhost:8080')).toEqual({ kind: 'unreachable', reason: 'localhost is this machine' })
  })

  test('loopback, private, link-local, CGNAT and unspecified addresses, in any spelling, are unreachable', () => {
    for (const url of ['http://127.0.0.1:8080', 'http://127.1', 'http://2130706433', 'http://0x7f.1', 'http://[::1]:8080', 'http://[::ffff:127.0.0.1]',
      'http://10.0.0.5', 'http://172.16.4.4', 'https://192.168.1.20', 'http://169.254.169.254', 'http://100.64.1.1', 'http://0.0.0.0:8080',
      'http://[fe80::1]', 'http://[fd12:3456::1]']) {
      expect({ url, kind: publicUrlProblem(url)?.kind }).toEqual({ url, kind: 'unreachable' })
    }
    expect(publicUrlProblem('http://192.168.1.20')).toEqual({ kind: 'unreachable', reason: 'a private address is reachable only on this network' })
  })

  test('a public host over plain http is a different problem; over https there is none', () => {
    expect(publicUrlProblem('http://tow.example.com')).toEqual({ kind: 'plain-http' })
    expect(publicUrlProblem('http://203.0.113.7:8080')?.kind).toBe('unreachable') // documentation range, reserved
    expect(publicUrlProblem('http://8.8.8.8')).toEqual({ kind: 'plain-http' })
    expect(publicUrlProblem('https://tow.example.com')).toBeNull()
    expect(publicUrlProblem('https://tow.example.com:8443/base')).toBeNull()
    expect(publicUrlProblem('https://[2a00:1450:4001::200e]')).toBeNull()
  })
})

describe('plainHttpBeyondThisMachine (serve warns: phones share positions only with https)', () => {
  test('plain http on any host other than this machine, in any spelling', () => {
    for (const url of ['http://tow.example.com', 'http://8.8.8.8:8080', 'http://192.168.1.20:8080', 'http://10.0.0.5', 'http://towline.local',
      'http://towserver:8080', 'http://[fd12:3456::1]', 'http://0.0.0.0:8080', 'http://169.254.1.1']) {
      expect({ url, warn: plainHttpBeyondThisMachine(url) }).toEqual({ url, warn: true })
    }
  })

  test('never for https, nor for loopback and localhost however written', () => {
    for (const url of ['https://tow.example.com', 'https://192.168.1.20:8443', 'http://localhost:8080', 'http://LOCALHOST.', 'http://app.localhost:8080',
      'http://127.0.0.1:8080', 'http://127.9.9.9', 'http://2130706433', 'http://0x7f.1', 'http://[::1]:8080', 'http://[::ffff:127.0.0.1]']) {
      expect({ url, warn: plainHttpBeyondThisMachine(url) }).toEqual({ url, warn: false })
    }
  })
})
