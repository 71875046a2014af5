/**
 * Checks every page's browser test makes (pages.md, "Quality bar for every page"), on a
 * playwright-core Page that has loaded the page to check:
 *
 * ```ts
 * await expectAccessible(page)                                   // axe-core: no serious or critical violation
 * await page.setViewportSize({ width: 360, height: 740 })
 * await expectNoHorizontalOverflow(page, { scrollers: ['.board-columns'] })
 * ```
 */
import { expect } from 'bun:test'
import { readFileSync } from 'node:fs'
import type { Page } from 'playwright-core'

const AXE_SOURCE = readFileSync(Bun.resolveSync('axe-core/axe.min.js', import.meta.dir), 'utf8')

/** One axe-core violation, as much of it as a failure message needs. */
interface Violation { id: string; impact: string | null; help: string; nodes: { target: unknown[]; failureSummary?: string }[] }

/**
 * Runs axe-core (WCAG 2.x A and AA rules and best practices) on the page as it is now and fails
 * with every serious or critical violation, each with the elements it found. `exclude` leaves
 * out parts the page does not own (CSS selectors).
 */
export async function expectAccessible(page: Page, opts: { exclude?: string[] } = {}): Promise<void> {
  if (!(await page.evaluate(() => 'axe' in window))) {
    // Through the DevTools protocol, so the page's own policy (no inline scripts) does not apply to it.
    await page.evaluate(AXE_SOURCE)
  }
  const violations = await page.evaluate(async (exclude: string[]) => {
    const axe = (window as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: Violation[] }> } }).axe
    const context = exclude.length ? { include: [['html']], exclude: exclude.map((s) => [s]) } : document
    const result = await axe.run(context, { resultTypes: ['violations'] })
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })) }))
  }, opts.exclude ?? [])
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
  expect(serious.map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(' | ')}`)).toEqual([])
}

/**
 * Fails when anything on the page reaches past the viewport's width, making the page scroll
 * sideways: the document itself, and every visible element not clipped by an ancestor. Elements
 * inside one of `scrollers` (containers meant to scroll sideways, like the board's columns) may;
 * the scroller itself must fit.
 */
export async function expectNoHorizontalOverflow(page: Page, opts: { scrollers?: string[] } = {}): Promise<void> {
  const found = await page.evaluate((scrollers: string[]) => {
    const width = document.documentElement.clientWidth
    const describe = (el: Element) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${[...el.classList].map((c) => `.${c}`).join('')}`
    const clipped = (el: Element) => {
      for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
        if (scrollers.some((s) => a!.matches(s))) return true
        const style = getComputedStyle(a)
        if (style.overflowX !== 'visible' || style.position === 'fixed') return true
      }
      return false
    }
    const offenders: string[] = []
    for (const el of document.body.querySelectorAll('*')) {
      const r = el.getBoundingClientRect()
      if (r.width === 0 || r.height === 0 || clipped(el)) continue
      if (r.right > width + 0.5 || r.left < -0.5) offenders.push(`${describe(el)} spans ${Math.round(r.left)}..${Math.round(r.right)} px`)
    }
    return { width, scrollWidth: document.documentElement.scrollWidth, offenders }
  }, opts.scrollers ?? [])
  expect({ scrollWidth: found.scrollWidth, offenders: found.offenders }).toEqual({ scrollWidth: found.width, offenders: [] })
}
