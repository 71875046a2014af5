/** Files the bundler turns into URLs (Bun.build's file loader: `/assets/<name>.<hash>.png`). */
declare module '*.png' {
  const url: string
  export default url
}
/** Stylesheets imported for their side effect: the bundler emits them beside the script (`map.<hash>.css`). */
declare module '*.css'
