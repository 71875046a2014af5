/**
 * THE transition table. Every status and every legal move, as data. The API, the board, the
 * driver page and the tracking page all ask `findMove`; a move that is not here cannot happen.
 */

/** Statuses in board order; the last three are finished. */
export const STATUSES = ['pending', 'confirmed', 'dispatched', 'en_route', 'on_scene', 'towing', 'at_destination', 'completed', 'cancelled', 'goa'] as const
export type JobStatus = (typeof STATUSES)[number]

export const FINISHED: readonly JobStatus[] = ['completed', 'cancelled', 'goa']
/** Statuses in which a unit must hold the job. */
export const NEEDS_UNIT: readonly JobStatus[] = ['dispatched', 'en_route', 'on_scene', 'towing', 'at_destination', 'completed']
/** The driver's road, one step at a time. */
const DRIVER_ROAD: readonly JobStatus[] = ['dispatched', 'en_route', 'on_scene', 'towing', 'at_destination', 'completed']

/**
 * How a move is asked for:
 * - `patch`: PATCH /jobs/{id} and the dispatch board's status buttons;
 * - `driver`: the driver's page; `assign` / `unassign`: handing a job to a unit or taking it off;
 * - `reopen`: POST /jobs/{id}/reopen, the only way out of a finished status.
 */
export type MoveVia = 'patch' | 'driver' | 'assign' | 'unassign' | 'reopen'

export interface Move {
  from: JobStatus
  to: JobStatus
  via: MoveVia
  /** The move is legal only while a unit holds the job. */
  needsUnit: boolean
}

export const isFinished = (s: string): boolean => (FINISHED as readonly string[]).includes(s)
export const isStatus = (s: string): s is JobStatus => (STATUSES as readonly string[]).includes(s)
const rank = (s: JobStatus) => STATUSES.indexOf(s)

function buildMoves(): Move[] {
  const moves: Move[] = []
  const unfinished = STATUSES.filter((s) => !isFinished(s))
  for (const from of unfinished) {
    // Board and API: forward along the order (skipping allowed), or cancelled / goa from anywhere unfinished.
    for (const to of STATUSES) {
      if (to === from || to === 'pending') continue
      const forward = !isFinished(to) || to === 'completed' ? rank(to) > rank(from) : true
      if (forward) moves.push({ from, to, via: 'patch', needsUnit: (NEEDS_UNIT as readonly string[]).includes(to) })
    }
    // Driver page: one step forward at a time, plus goa from on_scene.
    const i = DRIVER_ROAD.indexOf(from)
    if (i >= 0 && i < DRIVER_ROAD.length - 1) moves.push({ from, to: DRIVER_ROAD[i + 1]!, via: 'driver', needsUnit: true })
    if (from === 'on_scene') moves.push({ from, to: 'goa', via: 'driver', needsUnit: true })
    // Handing the job to a unit dispatches it; taking it off goes back to confirmed.
    if (from === 'pending' || from === 'confirmed') moves.push({ from, to: 'dispatched', via: 'assign', needsUnit: true })
    if ((NEEDS_UNIT as readonly string[]).includes(from)) moves.push({ from, to: 'confirmed', via: 'unassign', needsUnit: false })
  }
  for (const from of FINISHED) moves.push({ from, to: 'confirmed', via: 'reopen', needsUnit: false })
  return moves
}

/** Every legal move. */
export const MOVES: readonly Move[] = Object.freeze(buildMoves())

/** Why a move was refused, carried as details.reason. */
export type RefusalReason = 'job_finished' | 'not_finished' | 'unit_required' | 'backward' | 'not_allowed'

/** Finds the legal move, or says why there is none. */
export function findMove(from: JobStatus, to: JobStatus, via: MoveVia, hasUnit: boolean): { move: Move } | { refused: RefusalReason } {
  const move = MOVES.find((m) => m.from === from && m.to === to && m.via === via)
  if (move) return move.needsUnit && !hasUnit ? { refused: 'unit_required' } : { move }
  if (via === 'reopen') return { refused: 'not_finished' }
  if (isFinished(from)) return { refused: 'job_finished' }
  if (via === 'patch' && rank(to) < rank(from)) return { refused: 'backward' }
  return { refused: 'not_allowed' }
}

/** The moves a dispatcher's buttons offer from a status (for the board). */
export function nextMoves(from: JobStatus, via: MoveVia, hasUnit: boolean): Move[] {
  return MOVES.filter((m) => m.from === from && m.via === via && (!m.needsUnit || hasUnit))
}
