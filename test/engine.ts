/** Which engine the suite runs on: TOWLINE_TEST_ENGINE=postgres runs it on throwaway PostgreSQL clusters (npm test runs both). */
export const TEST_ENGINE: 'sqlite' | 'postgres' = process.env.TOWLINE_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite'
