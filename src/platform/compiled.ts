/** Whether this runs as the compiled binary (`bun build --compile`: modules live in Bun's embedded file system), not from source. */
export const COMPILED = import.meta.dir.startsWith('/$bunfs') || import.meta.dir.startsWith('B:/~BUN')
