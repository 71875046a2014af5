/**
 * Small copies of job photos for the pages' thumbnails: a photo uploaded from the dashboard is
 * kept as sent (up to 10 MB), and a driver's page showing three of them at 96 px would weigh
 * megabytes on a phone. A thumbnail fits inside THUMB_BOX pixels (twice the largest size a page
 * shows, for sharp screens), JPEG (WebP for a PNG or WebP, keeping transparency); the full photo
 * stays one tap away.
 *
 * Made on first look with Bun.Image (libjpeg-turbo, libspng, libwebp in the binary), one at a
 * time (decoding a large photo holds its pixels in memory), and kept in memory by the photo's
 * SHA-256: a photo never changes under its id, so neither does its thumbnail. A photo that would
 * cost too much to decode (or that the codec cannot read) gets a small drawn stand-in saying to
 * open the full photo: never the photo itself, which may be 100 megapixels.
 */
import { jpegDecodesSmall, readJpegHeader } from '../platform/jpeg'
import { alreadyHas, privateImage } from './private-image'

const THUMB_BOX = 320
const QUALITY = 70
/** Thumbnails kept (about 10-20 KB each). */
const KEPT = 256

/** The most pixels of a photo decoded whole for a thumbnail (64 MB of pixels): see jpegDecodesSmall. */
const MAX_DECODED_PIXELS = 16_000_000

/** What a thumbnail shows for a photo not shrunk (too costly to decode, or unreadable): a grey box saying so. */
export const STAND_IN: Thumbnail = {
  type: 'image/svg+xml',
  data: new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg" width="320" height="240" viewBox="0 0 320 240"><rect width="320" height="240" fill="#e4e4e0"/>'
    + '<text x="160" y="116" font-family="sans-serif" font-size="22" text-anchor="middle" fill="#222">Large photo</text>'
    + '<text x="160" y="146" font-family="sans-serif" font-size="18" text-anchor="middle" fill="#222">Open it to see it</text></svg>'),
}

interface Thumbnail { type: string; data: Uint8Array }
const kept = new Map<string, Thumbnail>()
let queue: Promise<unknown> = Promise.resolve()

/** The thumbnail of a photo (JPEG, or WebP for a PNG or WebP), or null when it gets the stand-in (unreadable, or too many pixels to decode). */
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
    // A baseline JPEG is shrunk while it is decoded (a 48 MP photo costs a few MB); a PNG, WebP,
    // progressive or component-by-component JPEG is decoded whole: past this size it gets the
    // stand-in rather than being decoded.
    const shrunkWhileDecoded = meta.format === 'jpeg' && jpegDecodesSmall(readJpegHeader(photo.data))
    if (!shrunkWhileDecoded && meta.width * meta.height > MAX_DECODED_PIXELS) return null
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
  const shown = thumb ?? STAND_IN
  return privateImage(request, shown.data, shown.type, tag)
}
