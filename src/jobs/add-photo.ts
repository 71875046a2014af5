import { readJpegHeader } from '../platform/jpeg'
import { requirePermission } from '../accounts/actor'
import { inTransaction } from '../db/client'
import { AppError, validationFailed } from '../platform/errors'
import { newId } from '../platform/ids'
import type { OperationContext } from '../operations/operation-context'
import { commitJobChange } from './commit-job-change'
import { loadWritableJob, type ActionGuard } from './job-context'

/** The largest photo taken (the pages' upload cap: BODY_CAPS.photo). */
export const MAX_PHOTO_BYTES = 10 * 1024 * 1024

/**
 * What one job keeps at most: a tow is documented in a dozen photos, and a leaked driver link
 * must not be able to fill the disk (every photo lives in the database file).
 */
export const MAX_PHOTOS_PER_JOB = 100
export const MAX_PHOTO_BYTES_PER_JOB = 200 * 1024 * 1024

/**
 * The largest picture kept, in pixels (100 megapixels: more than a phone's camera gives at 10
 * MB): a small file can declare a huge size (a 2.6 MB PNG of 30000 x 30000), which every page
 * showing it would have to decode.
 */
export const MAX_PHOTO_PIXELS = 100_000_000

/** An image's type and the size its header declares (a JPEG's height may be 0: given later in the file). */
export interface ImageHeader { type: 'image/jpeg' | 'image/png' | 'image/webp'; width: number; height: number }

/**
 * The image type the bytes are, whatever the upload claimed: JPEG, PNG or WebP, with the size
 * its header declares; else null. Not the first bytes only: the structure up to the image's
 * size must hold (a JPEG's segments up to its frame header, a PNG's header chunk and its
 * checksum, a WebP's first chunk), so a file that merely starts like an image is refused.
 */
export function imageHeaderOf(b: Uint8Array): ImageHeader | null {
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return jpegFrame(b)
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength)
  // PNG: the signature, then the IHDR chunk first (13 bytes, a size, a known depth and colour type, its CRC).
  if (b.length >= 33 && [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a].every((v, i) => b[i] === v) && String.fromCharCode(...b.subarray(12, 16)) === 'IHDR') {
    const width = view.getUint32(16), height = view.getUint32(20)
    const ok = view.getUint32(8) === 13 && width > 0 && height > 0 && [1, 2, 4, 8, 16].includes(b[24]!) && [0, 2, 3, 4, 6].includes(b[25]!)
      && view.getUint32(29) === Bun.hash.crc32(b.subarray(12, 29))
    return ok ? { type: 'image/png', width, height } : null
  }
  // WebP: a RIFF container of type WEBP whose stated size fits the bytes, its first chunk an image one.
  if (b.length >= 30 && String.fromCharCode(...b.subarray(0, 4)) === 'RIFF' && String.fromCharCode(...b.subarray(8, 12)) === 'WEBP') {
    const size = view.getUint32(4, true)
    if (size + 8 > b.length || size < 12) return null
    const u24 = (at: number) => b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16)
    switch (String.fromCharCode(...b.subarray(12, 16))) {
      // Lossy: a key frame's start code, then 14-bit width and height.
      case 'VP8 ': return b[23] === 0x9d && b[24] === 0x01 && b[25] === 0x2a ? { type: 'image/webp', width: view.getUint16(26, true) & 0x3fff, height: view.getUint16(28, true) & 0x3fff } : null
      // Lossless: its signature byte, then width - 1 and height - 1 in 14 bits each.
      case 'VP8L': {
        if (b[20] !== 0x2f) return null
        const bits = view.getUint32(21, true)
        return { type: 'image/webp', width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 }
      }
      // Extended: the canvas's width - 1 and height - 1 in 24 bits each.
      case 'VP8X': return { type: 'image/webp', width: u24(24) + 1, height: u24(27) + 1 }
    }
  }
  return null
}

/** The image type the bytes are (imageHeaderOf), else null. */
export function photoTypeOf(b: Uint8Array): ImageHeader['type'] | null {
  return imageHeaderOf(b)?.type ?? null
}

/** A JPEG's size from its frame header (readJpegHeader: fill bytes, TEM and RST as a decoder reads them); null when none is reached. */
function jpegFrame(b: Uint8Array): ImageHeader | null {
  const h = readJpegHeader(b)
  return h ? { type: 'image/jpeg', width: h.width, height: h.height } : null
}

/**
 * Adds a photo to a job (the job page's **Add photo**, the driver's page's camera): the bytes
 * are checked to be a JPEG, PNG or WebP of at most 10 MB, kept in the database, and the
 * timeline gets job.photo_added (detail.photo_id, content_type, bytes, by). A driver adds
 * photos only to the job their link is for.
 */
export function addPhoto(ctx: OperationContext, jobId: string, bytes: Uint8Array, guard: ActionGuard = {}): { id: string; contentType: string; bytes: number } {
  const permission = ctx.actor.kind === 'driver' ? 'jobs:drive' : 'jobs:write'
  requirePermission(ctx.actor, permission)
  if (bytes.length === 0) throw validationFailed([{ path: 'photo', message: 'choose a photo to add' }])
  if (bytes.length > MAX_PHOTO_BYTES) throw validationFailed([{ path: 'photo', message: `must be at most ${MAX_PHOTO_BYTES / 1024 / 1024} MB` }])
  const header = imageHeaderOf(bytes)
  if (!header) throw validationFailed([{ path: 'photo', message: 'must be a JPEG, PNG or WebP image' }])
  if (header.width * header.height > MAX_PHOTO_PIXELS) {
    throw validationFailed([{ path: 'photo', message: `must be at most ${MAX_PHOTO_PIXELS / 1_000_000} megapixels (this one is ${header.width} × ${header.height})` }])
  }
  const contentType = header.type
  const sha256 = new Bun.CryptoHasher('sha256').update(bytes).digest('hex')
  return inTransaction(ctx.db, (tx) => {
    const job = loadWritableJob(ctx, tx, jobId, permission, guard)
    const actor = ctx.actor
    if (actor.kind === 'driver' && job.unitId !== actor.unitId) throw new AppError('forbidden', 'This job was handed to another driver.', { actor: 'driver', required_permission: 'jobs:drive' })
    const kept = tx.$client.query<{ n: number; total: number | null }, [string]>('SELECT count(*) AS n, sum(bytes) AS total FROM job_photos WHERE job_id = ?').get(job.id)!
    if (kept.n >= MAX_PHOTOS_PER_JOB) throw validationFailed([{ path: 'photo', message: `cannot be added: this job already has ${MAX_PHOTOS_PER_JOB} photos, the most one job keeps` }])
    if ((kept.total ?? 0) + bytes.length > MAX_PHOTO_BYTES_PER_JOB) throw validationFailed([{ path: 'photo', message: `cannot be added: this job's photos would pass ${MAX_PHOTO_BYTES_PER_JOB / 1024 / 1024} MB, the most one job keeps` }])
    const now = ctx.clock.now()
    const id = newId('pho', now)
    tx.$client.query('INSERT INTO job_photos (id, account_id, job_id, content_type, bytes, sha256, data, taken_by, user_id, unit_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
      .run(id, job.accountId, job.id, contentType, bytes.length, sha256, bytes, actor.kind, actor.kind === 'dispatcher' ? actor.userId : null, actor.kind === 'driver' ? actor.unitId : null, now)
    commitJobChange(tx, ctx, job, { events: [{ type: 'job.photo_added', detail: { photo_id: id, content_type: contentType, bytes: bytes.length, by: actor.kind } }] })
    return { id, contentType, bytes: bytes.length }
  })
}
