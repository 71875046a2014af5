/** Whether TOWLINE_DB names a PostgreSQL database (a postgres:// URL) rather than a SQLite file. */
export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location)
}

/** TOWLINE_DB as it may be printed or logged: a PostgreSQL URL without its password or parameters. */
export function describeDatabase(location: string): string {
  if (!isPostgresUrl(location)) return location
  try {
    const u = new URL(location)
    return `${u.protocol}//${u.username ? `${decodeURIComponent(u.username)}@` : ''}${u.host}${u.pathname}`
  } catch {
    return 'postgres://(a URL that does not parse)'
  }
}
