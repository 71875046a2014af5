/**
 * Reading page forms: `application/x-www-form-urlencoded` and `multipart/form-data` bodies
 * (already read under their route's cap) into a plain object of fields. Strict where browsers
 * never stray, so anything else is a clear 400 rather than a guess:
 * - text is UTF-8 (raw bytes and %-escapes alike); a malformed %-escape is refused;
 * - a field name ending in `[]` (`scopes[]`) is a list under the name without the brackets
 *   (`scopes`), even with one value; any other name may appear once: repeated, it is refused;
 * - at most `maxFields` fields or parts, names of at most MAX_FIELD_NAME characters;
 * - a multipart part with a filename is a File (an empty file input, no name and no bytes, is
 *   left out); a part without one is a text field.
 */

/** What a form body holds: each field's text, a File for a multipart file part, or a list for `name[]` fields. */
export type FormFields = Record<string, string | File | (string | File)[]>

/** Why a form body could not be read; the message says so in plain words (rendered as a 400). */
export class FormError extends Error {}

/** Fields (or parts) a form may hold unless its route says otherwise. */
export const MAX_FORM_FIELDS = 256
/** Longest field name accepted, in characters. */
const MAX_FIELD_NAME = 200
/** Largest header block of one multipart part; a browser's is a few hundred bytes. */
const MAX_PART_HEADER_BYTES = 8 * 1024

const utf8 = new TextDecoder('utf-8', { fatal: true })
/** Decodes UTF-8 or returns null. */
const decodeUtf8 = (bytes: Uint8Array): string | null => {
  try { return utf8.decode(bytes) } catch { return null }
}

/** Gathers name/value pairs into FormFields by the rules above (lists for `name[]`, no repeats otherwise). */
function collect(entries: Iterable<[string, string | File]>): FormFields {
  const single = new Map<string, string | File>()
  const lists = new Map<string, (string | File)[]>()
  for (const [raw, value] of entries) {
    if (raw.length > MAX_FIELD_NAME) throw new FormError(`A field name is longer than ${MAX_FIELD_NAME} characters.`)
    const isList = raw.endsWith('[]')
    const name = isList ? raw.slice(0, -2) : raw
    if (!name) throw new FormError('A field has no name.')
    if (isList ? single.has(name) : single.has(name) || lists.has(name)) throw new FormError(`The field "${name}" appears more than once.`)
    if (isList) {
      const list = lists.get(name)
      if (list) list.push(value)
      else lists.set(name, [value])
    } else single.set(name, value)
  }
  // fromEntries defines own properties, so a field named __proto__ stays a field.
  return Object.fromEntries([...single, ...lists])
}

/** Reads an `application/x-www-form-urlencoded` body (as browsers and Twilio send it). */
export function parseUrlEncoded(bytes: Uint8Array, maxFields = MAX_FORM_FIELDS): FormFields {
  const text = decodeUtf8(bytes)
  if (text === null) throw new FormError('The form is not UTF-8 text.')
  const entries: [string, string][] = []
  let start = 0
  while (start <= text.length) {
    let end = text.indexOf('&', start)
    if (end === -1) end = text.length
    const pair = text.slice(start, end)
    start = end + 1
    if (!pair) continue
    if (entries.length === maxFields) throw new FormError(`The form holds more than ${maxFields} fields.`)
    const eq = pair.indexOf('=')
    const rawName = eq === -1 ? pair : pair.slice(0, eq)
    // Checked before decoding too: a megabyte of name is refused without decoding it.
    if (rawName.length > MAX_FIELD_NAME * 9) throw new FormError(`A field name is longer than ${MAX_FIELD_NAME} characters.`)
    entries.push([formDecode(rawName), eq === -1 ? '' : formDecode(pair.slice(eq + 1))])
  }
  return collect(entries)
}

function formDecode(s: string): string {
  try {
    return decodeURIComponent(s.replaceAll('+', ' '))
  } catch {
    // A stray "%", or escapes that do not spell UTF-8 (a lone surrogate among them).
    throw new FormError('The form holds a malformed %-escape, or one that is not UTF-8.')
  }
}

const BOUNDARY = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/

/** The boundary of a `multipart/form-data` Content-Type, or null when it is not one or has none that is valid. */
function multipartBoundary(contentType: string | null): string | null {
  if (!contentType) return null
  const semi = contentType.indexOf(';')
  if ((semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase() !== 'multipart/form-data') return null
  const params = parseParams(contentType.slice(semi + 1))
  const boundary = params?.get('boundary')
  return boundary !== undefined && BOUNDARY.test(boundary) ? boundary : null
}

/** Parses `; a=b; c="d e"` parameters (names lowercased); null when malformed. */
function parseParams(text: string): Map<string, string> | null {
  const out = new Map<string, string>()
  let i = 0
  const skipSpace = () => { while (text[i] === ' ' || text[i] === '\t') i++ }
  while (i < text.length) {
    skipSpace()
    if (text[i] === ';') { i++; continue }
    if (i >= text.length) break
    const eq = text.indexOf('=', i)
    if (eq === -1) return null
    const name = text.slice(i, eq).trim().toLowerCase()
    if (!/^[a-z0-9!#$&+.^_`|~*-]+$/.test(name)) return null
    i = eq + 1
    skipSpace()
    let value = ''
    if (text[i] === '"') {
      // No backslash escapes: browsers send a filename's backslashes as they are and its quotes as %22.
      const close = text.indexOf('"', i + 1)
      if (close === -1) return null
      value = text.slice(i + 1, close)
      i = close + 1
    } else {
      const end = text.indexOf(';', i)
      value = text.slice(i, end === -1 ? text.length : end).trim()
      i = end === -1 ? text.length : end
    }
    // The first of a repeated parameter counts (a second boundary= must not change the framing).
    if (!out.has(name)) out.set(name, value)
  }
  return out
}

const HEADER_END = Buffer.from('\r\n\r\n')

/**
 * Reads a `multipart/form-data` body with the boundary of its Content-Type: parts are framed by
 * CRLF + `--boundary`, the body ends with `--boundary--`, and a boundary-like line that is not
 * followed by `--` or a line end is content, not a frame.
 */
export function parseMultipart(bytes: Uint8Array, contentType: string | null, maxFields = MAX_FORM_FIELDS): FormFields {
  const boundary = multipartBoundary(contentType)
  if (boundary === null) throw new FormError('The body must be multipart/form-data with a valid boundary in its Content-Type.')
  if (bytes.byteLength === 0) return {}
  const body = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const dash = Buffer.from(`--${boundary}`)
  const delimiter = Buffer.from(`\r\n--${boundary}`)
  /** Where the frame whose `--boundary` starts at `at` ends: after its line end, -1 when it closes the body, null when it is content. */
  const frameEnd = (at: number): number | null => {
    let i = at + dash.length
    if (body[i] === 0x2d && body[i + 1] === 0x2d) return -1
    while (body[i] === 0x20 || body[i] === 0x09) i++ // transport padding
    return body[i] === 0x0d && body[i + 1] === 0x0a ? i + 2 : null
  }
  /** The next real frame after `from`: where its CRLF starts and where it ends (see frameEnd). */
  const nextFrame = (from: number): { at: number; end: number } | null => {
    for (let at = body.indexOf(delimiter, from); at !== -1; at = body.indexOf(delimiter, at + 1)) {
      const end = frameEnd(at + 2)
      if (end !== null) return { at, end }
    }
    return null
  }
  // A preamble before the first frame is allowed (and ignored), as RFC 2046 says.
  const startsFramed = body.subarray(0, dash.length).equals(dash) ? frameEnd(0) : null
  const first = startsFramed !== null ? { at: 0, end: startsFramed } : nextFrame(0)
  if (!first) throw new FormError('The multipart body holds no part framed by its boundary.')
  const entries: [string, string | File][] = []
  let parts = 0
  for (let start = first.end; start !== -1;) {
    if (++parts > maxFields) throw new FormError(`The form holds more than ${maxFields} parts.`)
    // The header block ends with an empty line; searched within a bounded window only.
    const window = body.subarray(start - 2, start + MAX_PART_HEADER_BYTES + 2)
    const headerEnd = window.indexOf(HEADER_END)
    if (headerEnd === -1) throw new FormError('A part of the multipart body has no complete header block.')
    const part = readPartHeaders(window.subarray(2, Math.max(2, headerEnd)))
    const contentStart = start - 2 + headerEnd + 4
    const frame = nextFrame(contentStart - 2)
    if (!frame) throw new FormError('The multipart body ended before its closing boundary.')
    const content = body.subarray(Math.min(contentStart, frame.at), frame.at)
    if (part.filename !== undefined) {
      // An empty file input: browsers send filename="" with no bytes.
      if (part.filename !== '' || content.byteLength > 0) entries.push([part.name, new File([content as Uint8Array<ArrayBuffer>], part.filename, { type: part.type ?? 'application/octet-stream' })])
    } else {
      const text = decodeUtf8(content)
      if (text === null) throw new FormError(`The field "${part.name.slice(0, MAX_FIELD_NAME)}" is not UTF-8 text.`)
      entries.push([part.name, text])
    }
    start = frame.end
  }
  return collect(entries)
}

/** Reads one part's headers: its Content-Disposition (form-data, name, filename) and Content-Type. */
function readPartHeaders(block: Buffer): { name: string; filename?: string; type?: string } {
  const text = decodeUtf8(block)
  if (text === null) throw new FormError('A part header of the multipart body is not UTF-8 text.')
  let disposition: Map<string, string> | null | undefined
  let type: string | undefined
  for (const line of text.split('\r\n')) {
    if (!line) continue
    const colon = line.indexOf(':')
    // A folded or nameless header line is not something a browser sends.
    if (colon <= 0 || line[0] === ' ' || line[0] === '\t') throw new FormError('A part of the multipart body has a malformed header.')
    const header = line.slice(0, colon).trim().toLowerCase()
    const value = line.slice(colon + 1).trim()
    if (header === 'content-disposition') {
      if (disposition !== undefined) throw new FormError('A part of the multipart body has two Content-Disposition headers.')
      const semi = value.indexOf(';')
      if ((semi === -1 ? value : value.slice(0, semi)).trim().toLowerCase() !== 'form-data') throw new FormError('A part of the multipart body is not form-data.')
      disposition = parseParams(semi === -1 ? '' : value.slice(semi + 1))
      if (disposition === null) throw new FormError('A part of the multipart body has a malformed Content-Disposition.')
    } else if (header === 'content-type') type = value.toLowerCase()
  }
  const name = disposition?.get('name')
  if (!disposition || !name) throw new FormError('A part of the multipart body has no field name.')
  const filename = disposition.get('filename') ?? disposition.get('filename*')
  // Only the last path segment of a filename is kept: some clients send a whole path.
  return { name, type, filename: filename === undefined ? undefined : filename.slice(Math.max(filename.lastIndexOf('/'), filename.lastIndexOf('\\')) + 1) }
}
