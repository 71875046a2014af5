import { readFileSync } from 'node:fs'
import { hostname } from 'node:os'

/** This process as the holder of leases: `<host>:<pid>`. */
export const LEASE_OWNER = `${hostname()}:${process.pid}`

/**
 * Tells whether leases held by `owner` can be taken back at once by `self` when it starts: the
 * owner ran on this machine and its process is gone (or it is `self`, which holds nothing yet:
 * the pid was reused). Owners on other machines are waited out until their leases expire.
 */
export function isGoneLocalOwner(owner: string | null, self = LEASE_OWNER): boolean {
  if (!owner) return true
  const cut = owner.lastIndexOf(':')
  const host = owner.slice(0, cut)
  const pid = Number(owner.slice(cut + 1))
  const selfHost = self.slice(0, self.lastIndexOf(':'))
  if (host !== selfHost || !Number.isInteger(pid) || pid <= 0) return false
  if (owner === self) return true
  try {
    process.kill(pid, 0)
  } catch (err) {
    // EPERM: the process exists (another user's); only ESRCH means it is gone.
    return (err as NodeJS.ErrnoException).code === 'ESRCH'
  }
  // Killed but not yet reaped by its parent (a supervisor that has not waited for it yet): a
  // zombie still answers signal 0, yet holds nothing any more.
  return isZombie(pid)
}

/** Whether a process is dead and waiting to be reaped (Linux's /proc; false where there is none). */
function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // "pid (command) S ...": the state follows the last ")" (a command name may hold one).
    const state = stat[stat.lastIndexOf(')') + 2]
    return state === 'Z' || state === 'X'
  } catch {
    return false
  }
}
