import { iso } from '../platform/clock'
import type { InvoiceLine } from './invoice.table'

/** An invoice's statuses: issued (money owed), then paid, void or written_off, each final. */
export const INVOICE_STATUSES = ['issued', 'paid', 'void', 'written_off'] as const
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number]

/** What people call each status. */
export const INVOICE_STATUS_LABELS: Record<InvoiceStatus, string> = { issued: 'Issued', paid: 'Paid', void: 'Void', written_off: 'Written off' }

/** An invoice row as the queries read it. */
export interface InvoiceRow {
  id: string
  accountId: string
  jobId: string
  number: number
  status: InvoiceStatus
  lines: InvoiceLine[]
  totalCents: number
  amountPaidCents: number
  issuedByUserId: string | null
  issuedAt: number
  paidAt: number | null
  voidedAt: number | null
  writtenOffAt: number | null
  createdAt: number
  updatedAt: number
}

/** A payment row as the queries read it. */
export interface PaymentRow { id: string; invoiceId: string; amountCents: number; method: string; recordedByUserId: string | null; createdAt: number }

/** A payment as the pages show it. */
export interface PaymentView { id: string; amount_cents: number; method: string; recorded_by_user_id: string | null; created_at: string }

/** An invoice as the pages show it (invoices are not in the API: pages.md gives them none). */
export interface InvoiceView {
  id: string
  job_id: string
  /** The display number, `INV-0001`. */
  number: string
  status: InvoiceStatus
  lines: InvoiceLine[]
  total_cents: number
  amount_paid_cents: number
  /** What is still owed: total - paid while issued; 0 once paid, void or written off. */
  amount_due_cents: number
  /** What was written off (total - paid at the time), or 0. */
  written_off_cents: number
  issued_by_user_id: string | null
  issued_at: string
  paid_at: string | null
  voided_at: string | null
  written_off_at: string | null
  /** Oldest first. */
  payments: PaymentView[]
}

/** The account's invoice number as people read it: `INV-0001`, growing past 9999 as `INV-10000`. */
export function invoiceNumberText(n: number): string {
  return `INV-${String(n).padStart(4, '0')}`
}

/** The amount still owed on an invoice row. */
export function amountDue(r: Pick<InvoiceRow, 'status' | 'totalCents' | 'amountPaidCents'>): number {
  return r.status === 'issued' ? r.totalCents - r.amountPaidCents : 0
}

/** Builds the view of an invoice and its payments. */
export function invoiceView(r: InvoiceRow, payments: PaymentRow[]): InvoiceView {
  return {
    id: r.id, job_id: r.jobId, number: invoiceNumberText(r.number), status: r.status, lines: r.lines,
    total_cents: r.totalCents, amount_paid_cents: r.amountPaidCents, amount_due_cents: amountDue(r),
    written_off_cents: r.status === 'written_off' ? r.totalCents - r.amountPaidCents : 0,
    issued_by_user_id: r.issuedByUserId, issued_at: iso(r.issuedAt)!, paid_at: iso(r.paidAt), voided_at: iso(r.voidedAt), written_off_at: iso(r.writtenOffAt),
    payments: payments.map((p) => ({ id: p.id, amount_cents: p.amountCents, method: p.method, recorded_by_user_id: p.recordedByUserId, created_at: iso(p.createdAt)! })),
  }
}
