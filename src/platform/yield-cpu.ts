import { setPriority } from 'node:os'

/**
 * Puts the calling thread behind the live service for CPU (Linux: setpriority and
 * sched_setscheduler with pid 0 change the calling thread only): nice 19, and SCHED_IDLE, which
 * runs it only on a CPU nothing else wants and never preempts the server's thread for a time
 * slice (nice 19 alone still takes slices: on a two-CPU machine each one delayed a read by a few
 * milliseconds). For bulk work beside a serving process: CSV imports. Where either is refused
 * (another OS, no glibc) the thread keeps what it had.
 */
export function yieldCpuToService(): void {
  try { setPriority(0, 19) } catch { /* not allowed here */ }
  if (process.platform !== 'linux') return
  try {
    const { dlopen, FFIType, ptr } = require('bun:ffi') as typeof import('bun:ffi')
    const libc = dlopen('libc.so.6', { sched_setscheduler: { args: [FFIType.i32, FFIType.i32, FFIType.ptr], returns: FFIType.i32 } })
    const SCHED_IDLE = 5
    libc.symbols.sched_setscheduler(0, SCHED_IDLE, ptr(new Int32Array(1)))
    libc.close()
  } catch { /* no glibc (musl): nice 19 only */ }
}
