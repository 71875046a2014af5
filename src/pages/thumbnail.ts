/**
 * Small copies of job photos for the pages' thumbnails: a photo uploaded from the dashboard is
 * kept as sent (up to 10 MB), and a driver's page showing three of them at 96 px would weigh
 * megabytes on a phone. A thumbnail fits inside THUMB_BOX pixels (twice the largest size a page
 * shows, for sharp screens), JPEG (WebP for a PNG or WebP, keeping transparency); the full photo
 * stays one tap away.
 *
 * Made on first look with Bun.Image (libjpeg-turbo, libspng, libwebp in the binary), one at a
 * time (decoding a large photo holds its pixels in memory), and kept in memory by the photo's
 * SHA-256: a photo never changes under its id, so neither does its thumbnail. A photo the codec
 * cannot read is shown as it is.
 */
import { alreadyHas, privateImage } from './private-image'

const THUMB_BOX = 320
const QUALITY = 70
/** Thumbnails kept (about 10-20 KB each). */
const KEPT = 256

/** The most pixels of a PNG or WebP decoded for a thumbnail (64 MB of pixels). */
const MAX_DECODED_PIXELS = 16_000_000

interface Thumbnail { type: string; data: Uint8Array }
const kept = new Map<string, Thumbnail>()
let queue: Promise<unknown> = Promise.resolve()

/** The thumbnail of a photo (JPEG, or WebP for a PNG or WebP), or null when the photo is shown as it is (unreadable, or too many pixels to decode). */
export async function thumbnailOf(photo: { data: Uint8Array; sha256: string }): Promise<Thumbnail | null> {
  const hit = kept.get(photo.sha256)
  if (hit) {
    // Most recently used last: the oldest look is the first dropped.
    kept.delete(photo.sha256)
    kept.set(photo.sha256, hit)
    return hit
  }
  const made = queue.then(async () => {
    const meta = await new Bun.Image(photo.data).metadata()
    // A JPEG is shrunk while it is decoded (a 48 MP photo costs a few MB); a PNG or WebP is
    // decoded whole, four bytes a pixel: past this size it is shown as it is rather than decoded.
    if (meta.format !== 'jpeg' && meta.width * meta.height > MAX_DECODED_PIXELS) return null
    const image = new Bun.Image(photo.data, { maxPixels: 100_000_000 }).resize(THUMB_BOX, THUMB_BOX, { fit: 'inside', withoutEnlargement: true })
    // WebP keeps a PNG's or WebP's transparency (JPEG has none: what lies under it would show).
    return meta.format === 'jpeg'
      ? { type: 'image/jpeg', data: await image.jpeg({ quality: QUALITY }).bytes() }
      : { type: 'image/webp', data: await image.webp({ quality: QUALITY }).bytes() }
  })
  queue = made.catch(() => undefined)
  let thumb: Thumbnail | null
  try {
    thumb = await made
  } catch {
    return null
  }
  if (!thumb) return null
  kept.set(photo.sha256, thumb)
  if (kept.size > KEPT) kept.delete(kept.keys().next().value!)
  return thumb
}

/** The answer to a thumbnail's URL: as privateImage answers a photo (304 to a repeat look, without making it again). */
export async function thumbnailResponse(request: Request, photo: { data: Uint8Array; sha256: string; contentType: string }): Promise<Response> {
  const tag = `${photo.sha256}.thumb`
  if (alreadyHas(request, tag)) return privateImage(request, new Uint8Array(), 'image/jpeg', tag)
  const thumb = await thumbnailOf(photo)
  return thumb ? privateImage(request, thumb.data, thumb.type, tag) : privateImage(request, photo.data, photo.contentType, photo.sha256)
}
