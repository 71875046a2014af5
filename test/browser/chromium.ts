/** Headless Debian Chromium through playwright-core, as the machine allows (no network beyond loopback). */
import { chromium, type Browser } from 'playwright-core'

const RESOLVER_FLAG = '--host-resolver-rules='

/**
 * Launches Chromium for a test. Every host name but the loopback ones resolves to nothing, so a
 * page under test can never send a request off this machine (a map tile, a font, a beacon):
 * it fails at once instead. A test's own `--host-resolver-rules` (MAP a name to 127.0.0.1) comes first.
 */
export async function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  const own = extraArgs.filter((a) => a.startsWith(RESOLVER_FLAG)).map((a) => a.slice(RESOLVER_FLAG.length))
  const rules = [...own, 'MAP * ~NOTFOUND', 'EXCLUDE localhost', 'EXCLUDE 127.0.0.1', 'EXCLUDE [::1]'].join(', ')
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync',
      ...extraArgs.filter((a) => !a.startsWith(RESOLVER_FLAG)), `${RESOLVER_FLAG}${rules}`],
  })
}
