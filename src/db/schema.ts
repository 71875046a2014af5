/** Every table, re-exported for drizzle-kit and for queries. */
export * from '../accounts/account.table'
