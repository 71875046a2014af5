/** The longest company name (it opens every text the company sends). */
export const MAX_COMPANY_NAME = 100
/** The longest site (yard) name. */
export const MAX_SITE_NAME = 100
