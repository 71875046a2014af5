/**
 * The JPEG header walk that decides whether a thumbnail may decode a photo shrunk: it must read
 * the frame and first scan as a decoder does, so that bytes a decoder steps over (fill bytes, TEM
 * and RST markers) cannot make a progressive photo pass for a baseline one.
 */
import { describe, expect, test } from 'bun:test'
import { jpegDecodesSmall, readJpegHeader } from './jpeg'

const seg = (marker: number, body: number[]) => [0xff, marker, (body.length + 2) >> 8, (body.length + 2) & 0xff, ...body]
/** A frame header: precision 8, height, width, then per component id, sampling, table. */
const sof = (marker: number, width: number, height: number, components = 3) =>
  seg(marker, [8, height >> 8, height & 0xff, width >> 8, width & 0xff, components, ...Array.from({ length: components }, (_, c) => [c + 1, 0x11, 0]).flat()])
/** A scan header carrying `n` components. */
const sos = (n: number) => seg(0xda, [n, ...Array.from({ length: n }, (_, c) => [c + 1, 0]).flat(), 0, 63, 0])
const jpeg = (...parts: number[][]) => new Uint8Array([0xff, 0xd8, ...parts.flat(), 0x12, 0x34, 0xff, 0xd9])
const APP0 = seg(0xe0, [0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0])

describe('readJpegHeader and jpegDecodesSmall', () => {
  test('a baseline frame whose first scan carries every component decodes small; its size is read', () => {
    const h = readJpegHeader(jpeg(APP0, sof(0xc0, 9800, 9800), sos(3)))
    expect(h).toEqual({ sof: 0xc0, width: 9800, height: 9800, components: 3, firstScanComponents: 3 })
    expect(jpegDecodesSmall(h)).toBe(true)
  })

  test('progressive, lossless and component-by-component frames are held whole', () => {
    for (const marker of [0xc2, 0xc3, 0xc6, 0xca]) expect({ marker, small: jpegDecodesSmall(readJpegHeader(jpeg(APP0, sof(marker, 9800, 9800), sos(3)))) }).toEqual({ marker, small: false })
    expect(jpegDecodesSmall(readJpegHeader(jpeg(APP0, sof(0xc0, 9800, 9800), sos(1))))).toBe(false)
  })

  test('bytes a decoder steps over do not hide a progressive frame: TEM, RST and fill bytes before it', () => {
    for (const before of [[0xff, 0x01], [0xff, 0xd0], [0xff, 0xd7], [0xff, 0xff, 0xff]]) {
      const h = readJpegHeader(new Uint8Array([0xff, 0xd8, ...before, ...APP0, ...sof(0xc2, 9800, 9800), ...sos(3), 0xff, 0xd9]))
      expect({ before, sof: h?.sof, small: jpegDecodesSmall(h) }).toEqual({ before, sof: 0xc2, small: false })
    }
  })

  test('anything else where a marker must be ends the walk: no frame is no header, a frame without its scan is not small', () => {
    expect(readJpegHeader(new Uint8Array([0xff, 0xd8, 0x00, 0x01, ...sof(0xc0, 10, 10), ...sos(3)]))).toBeNull()
    const cut = readJpegHeader(new Uint8Array([0xff, 0xd8, ...sof(0xc0, 10, 10), 0x00, 0x01, ...sos(3)]))
    expect(cut).toMatchObject({ sof: 0xc0, firstScanComponents: null })
    expect(jpegDecodesSmall(cut)).toBe(false)
    expect(readJpegHeader(new Uint8Array([0x89, 0x50, 0x4e, 0x47]))).toBeNull()
  })
})
