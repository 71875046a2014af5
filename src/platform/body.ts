import { requestInfo } from './request-info'

/** Why a body could not be read: over its route's cap (413), or cut off by the client mid-upload (400). */
export class BodyError extends Error {
  constructor(readonly problem: 'too_large' | 'aborted', readonly limitBytes: number) {
    super(problem === 'too_large' ? `the request body is over ${limitBytes} bytes` : 'the request body ended before it was complete')
  }
}

const EMPTY = new Uint8Array(0)

/**
 * The slowest upload waited for, in bytes a second (64 kbit/s, below a weak 2G signal): a request
 * sending a body gets the idle timeout plus the body's time at this rate (at most 255 s in all);
 * a client slower than that, or one that stops, is cut off.
 */
export const MIN_UPLOAD_BYTES_PER_S = 8 * 1024

/**
 * Reads a request's body under a cap: a declared Content-Length over it is refused before a
 * byte is read, and a chunked body is counted as it arrives and cut at the cap, so memory never
 * holds more than `limitBytes` of it. A client that hangs up mid-upload is a BodyError too.
 */
export async function readBody(request: Request, limitBytes: number): Promise<Uint8Array> {
  const info = requestInfo(request)
  const refuse = (problem: BodyError['problem']) => {
    info.bodyProblem = problem
    return new BodyError(problem, limitBytes)
  }
  const declared = request.headers.get('content-length')
  if (declared !== null && Number(declared) > limitBytes) throw refuse('too_large')
  if (!request.body) return EMPTY
  // Time to send it (Bun's idle timer does not count bytes coming in): the declared length, or for
  // a chunked body as much as the route takes, at the slowest rate waited for.
  const framed = declared !== null && /^\d+$/.test(declared)
  const length = framed ? Number(declared) : limitBytes
  if (length > 0) info.allowTime?.(length / MIN_UPLOAD_BYTES_PER_S)
  try {
    // HTTP framing bounds a declared body by its length, so it can be taken whole.
    if (framed) {
      const whole = new Uint8Array(await request.arrayBuffer())
      if (whole.byteLength > limitBytes) throw refuse('too_large')
      return whole
    }
    const reader = request.body.getReader()
    const chunks: Uint8Array[] = []
    let total = 0
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      total += value.byteLength
      if (total > limitBytes) {
        // Stop taking the upload: what the client still sends is never buffered.
        reader.cancel().catch(() => {})
        throw refuse('too_large')
      }
      chunks.push(value)
    }
    if (chunks.length === 1) return chunks[0]!
    const out = new Uint8Array(total)
    let at = 0
    for (const c of chunks) { out.set(c, at); at += c.byteLength }
    return out
  } catch (err) {
    if (err instanceof BodyError) throw err
    throw refuse('aborted')
  }
}
