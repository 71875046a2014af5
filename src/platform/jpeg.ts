/**
 * A JPEG's header as its marker segments say it, read the way a decoder walks them: from SOI,
 * fill bytes skipped, TEM and RST markers taking no length. Anything else that is not a marker
 * where one must be (garbage between segments, which libjpeg would skip with a warning) ends the
 * walk as unreadable, so a check made here cannot be walked around by bytes the decoder ignores.
 */

/** A JPEG's frame (SOFn) and its first scan (SOS), as far as they are read. */
export interface JpegHeader {
  /** The frame marker: 0xC0 baseline, 0xC1 extended, 0xC2 progressive, 0xC3 lossless, 0xC9-0xCB arithmetic ones. */
  sof: number
  width: number
  height: number
  /** Components in the frame (1 grey, 3 colour, 4 CMYK). */
  components: number
  /** Components in the first scan, or null when the walk ended before a scan. */
  firstScanComponents: number | null
}

/** Reads a JPEG's frame and first scan header; null when the bytes are not a JPEG walked to a frame. */
export function readJpegHeader(b: Uint8Array): JpegHeader | null {
  if (b.length < 4 || b[0] !== 0xff || b[1] !== 0xd8) return null
  let header: JpegHeader | null = null
  let i = 2
  while (i + 4 <= b.length) {
    if (b[i] !== 0xff) return header
    let marker = b[i + 1]!
    while (marker === 0xff && i + 2 < b.length) marker = b[++i + 1]! // fill bytes
    i += 2
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue // no length
    if (marker === 0xd8 || marker === 0xd9 || marker === 0x00) return header
    const length = (b[i]! << 8) | b[i + 1]!
    if (length < 2 || i + length > b.length) return header
    if (marker === 0xda) {
      // The first scan: what it carries decides how the decoder holds the image.
      return header && length >= 3 ? { ...header, firstScanComponents: b[i + 2]! } : header
    }
    if (!header && marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      // precision, height, width, components
      if (length < 8) return null
      const height = (b[i + 3]! << 8) | b[i + 4]!, width = (b[i + 5]! << 8) | b[i + 6]!, components = b[i + 7]!
      if (width === 0 || components < 1 || components > 4) return null
      header = { sof: marker, width, height, components, firstScanComponents: null }
    }
    i += length
  }
  return header
}

/**
 * Whether libjpeg can decode the JPEG shrunk, holding only a band of the smaller image: a
 * sequential DCT frame (baseline, extended or arithmetic) whose first scan carries every
 * component. A progressive, lossless or component-by-component one is held whole until its
 * last scan (a 36 MP progressive photo took 110 MB).
 */
export function jpegDecodesSmall(h: JpegHeader | null): boolean {
  return h !== null && [0xc0, 0xc1, 0xc9].includes(h.sof) && h.firstScanComponents === h.components
}
