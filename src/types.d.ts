declare module '*.sql' {
  const sql: string
  export default sql
}
declare module '*/standalone.js' {
  const path: string
  export default path
}
