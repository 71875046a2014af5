import type { JobStatus } from '../jobs/job-status'

/** Status labels as every page shows them (pages.md). */
export const STATUS_LABELS: Record<JobStatus, string> = {
  pending: 'Pending', confirmed: 'Confirmed', dispatched: 'Dispatched', en_route: 'En route', on_scene: 'On scene',
  towing: 'Towing', at_destination: 'At destination', completed: 'Completed', cancelled: 'Cancelled', goa: 'GOA',
}
