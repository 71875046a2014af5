import { expect, test } from 'bun:test'
import { DEFAULT_TEMPLATES, renderTemplate } from './templates'

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
