/**
 * What a caller may see: one account, and within it every site (siteIds null) or only some.
 * API keys limited to sites, and later dashboard users and driver links, all carry one.
 */
export interface AccountScope {
  accountId: string
  /** Site ids the caller is limited to, or null for every site of the account. */
  siteIds: string[] | null
}

/**
 * Tells whether a caller sees a thing that serves `serves` (a list of site ids, or null for
 * every site of the account): yes when either side is unlimited or they share a site.
 */
export function seesSites(scope: AccountScope, serves: string[] | null): boolean {
  return scope.siteIds === null || serves === null || serves.some((s) => scope.siteIds!.includes(s))
}

/**
 * The SQL condition (and its parameters) keeping rows whose JSON site list `column` (null for
 * every site) shares a site with the caller's; empty when the caller sees every site.
 */
export function sitesCondition(scope: AccountScope, column: string): { sql: string; params: string[] } {
  if (scope.siteIds === null) return { sql: '', params: [] }
  return {
    sql: ` AND (${column} IS NULL OR EXISTS (SELECT 1 FROM json_each(${column}) WHERE value IN (${scope.siteIds.map(() => '?').join(', ')})))`,
    params: scope.siteIds,
  }
}
