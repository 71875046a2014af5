import { expect, test } from 'bun:test'
import { DEFAULT_TEMPLATES, renderTemplate, smsSegments, templateProblem } from './templates'

// The GSM 03.38 basic character set (plus the newline): texts in it cost one segment per 160 characters.
const GSM7 = /^[@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&'()*+,\-./0-9:;<=>?¡A-ZÄÖÑÜ§¿a-zäöñüà{}]*$/

test.each(Object.entries(DEFAULT_TEMPLATES))('the %s template is plain GSM-7 and fits one segment with a long link', (_, template) => {
  expect(template).toMatch(GSM7)
  const text = renderTemplate(template, {
    company: 'Rose City Towing', pickup: 'I-5 N at exit 299B, right shoulder near the big green sign', tracking_url: 'https://tow.example.com/t/AbCdEfGhIjKlMnOpQrStUvWx',
    driver_url: 'https://tow.example.com/d/AbCdEfGhIjKlMnOpQrStUvWx', eta: ', arriving in about 25 min', job_ref: 'AAA-778812',
  })
  expect(text).toMatch(GSM7)
  expect(text.length).toBeLessThanOrEqual(160)
})

test('a text costs 1 segment up to 160 plain characters, then one per 153; an extension character counts twice; one character outside GSM-7 makes it 70, then 67', () => {
  expect(smsSegments('a'.repeat(160))).toEqual({ segments: 1, encoding: 'GSM-7', units: 160 })
  expect(smsSegments('a'.repeat(161))).toEqual({ segments: 2, encoding: 'GSM-7', units: 161 })
  expect(smsSegments('a'.repeat(306)).segments).toBe(2)
  expect(smsSegments('a'.repeat(307)).segments).toBe(3)
  expect(smsSegments('€'.repeat(80))).toEqual({ segments: 1, encoding: 'GSM-7', units: 160 })
  expect(smsSegments(`${'a'.repeat(69)}’`)).toEqual({ segments: 1, encoding: 'UCS-2', units: 70 })
  expect(smsSegments(`${'a'.repeat(70)}’`).segments).toBe(2)
  expect(smsSegments('🚚'.repeat(35)).segments).toBe(1)
  expect(smsSegments('🚚'.repeat(36)).segments).toBe(2)
})

test('a wording may hold only the placeholders its texts are given; the driver link only in the driver\'s job-link text', () => {
  expect(templateProblem('status_en_route', '{company}: on the way{eta}. {tracking_url} ref {job_ref} at {pickup}')).toBeNull()
  expect(templateProblem('driver_job_link', '{driver_url}')).toBeNull()
  expect(templateProblem('status_en_route', 'Open {driver_url}')).toBe('{driver_url} is not a placeholder of this text; it can use {company}, {pickup}, {tracking_url}, {eta}, {job_ref}')
  expect(templateProblem('driver_job_removed', '{driver_url} { company } {}')).toContain('{driver_url}, { company }, {} are not placeholders')
  expect(templateProblem('driver_job_link', '{company}: new job at {pickup}')).toBe("must hold {driver_url}: this text is how the driver gets the job's link")
  expect(templateProblem('status_towing', ' \n ')).toBe('must not be empty')
  expect(templateProblem('status_towing', 'a'.repeat(1531))).toContain('at most 1530')
  // Every default passes its own check.
  for (const [name, text] of Object.entries(DEFAULT_TEMPLATES)) expect(templateProblem(name as keyof typeof DEFAULT_TEMPLATES, text)).toBeNull()
})
