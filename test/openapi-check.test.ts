import { describe, expect, test } from 'bun:test'
import { responseCheckerFor, webhookProblems } from './openapi-check'

const doc = {
  paths: {
    '/things/{id}': {
      get: {
        responses: {
          200: { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } },
          404: { description: 'no', content: { 'application/json': { schema: { type: 'object', required: ['error'], properties: { error: { type: 'object' } } } } } },
        },
      },
      delete: { responses: { 204: { description: 'gone' } } },
    },
  },
  webhooks: { 'thing.made': { post: { requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } } } } },
  components: {
    schemas: {
      Thing: { type: 'object', required: ['id', 'count', 'at'], properties: { id: { type: 'string' }, count: { type: 'integer' }, at: { type: 'string', format: 'date-time' }, type: { type: 'string' } } },
    },
  },
}
const check = responseCheckerFor(doc)
const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } })

describe('the response check of the test kit', () => {
  test('passes a response the document describes, and routes it does not list', async () => {
    await check('GET', 'http://localhost/api/v1/things/t_1', json(200, { id: 't_1', count: 2, at: '2026-11-21T09:00:00.000Z' }))
    await check('GET', 'http://localhost/api/v1/things/t_1', json(404, { error: {} }))
    await check('DELETE', 'http://localhost/api/v1/things/t_1', new Response(null, { status: 204 }))
    await check('GET', 'http://localhost/api/v1/elsewhere', json(500, 'anything'))
  })

  test('fails on a status the operation does not declare', async () => {
    await expect(check('GET', 'http://localhost/api/v1/things/t_1', json(409, { error: {} }))).rejects.toThrow(/answered 409, a status GET \/things\/\{id\} does not declare \(it declares 200, 404\)/)
  })

  test('fails on a body that does not match, naming what differs', async () => {
    await expect(check('GET', 'http://localhost/api/v1/things/t_1', json(200, { id: 't_1', count: '2', at: '2026-11-21T09:00:00.000Z' }))).rejects.toThrow(/\/count must be integer/)
    await expect(check('GET', 'http://localhost/api/v1/things/t_1', json(200, { id: 't_1', count: 2, at: '2026-02-30T09:00:00Z' }))).rejects.toThrow(/\/at must match format "date-time"/)
    await expect(check('GET', 'http://localhost/api/v1/things/t_1', new Response('{}', { status: 200, headers: { 'content-type': 'text/plain' } }))).rejects.toThrow(/content-type text\/plain/)
    await expect(check('DELETE', 'http://localhost/api/v1/things/t_1', new Response('x', { status: 204 }))).rejects.toThrow(/with a body, where DELETE \/things\/\{id\} declares none/)
  })

  test('checks a webhook body against the entry of its type', () => {
    expect(webhookProblems(doc, { type: 'thing.made', id: 't', count: 1, at: '2026-11-21T09:00:00Z' })).toEqual([])
    expect(webhookProblems(doc, { type: 'thing.made', id: 't', at: '2026-11-21T09:00:00Z' })).toEqual(["/ must have required property 'count'"])
    expect(webhookProblems(doc, { type: 'thing.lost' })).toEqual(['no webhooks entry for type thing.lost'])
  })
})
