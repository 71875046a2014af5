/** The part of autocannon's programmatic API that scripts/bench uses (the package ships no types). */
declare module 'autocannon' {
  interface AutocannonOptions {
    url: string
    connections?: number
    duration?: number
    workers?: number
    headers?: Record<string, string>
  }
  interface Histogram {
    average: number
    mean: number
    total: number
    p50: number
    p99: number
    max: number
  }
  interface AutocannonResult {
    duration: number
    errors: number
    timeouts: number
    non2xx: number
    latency: Histogram
    requests: Histogram
  }
  function autocannon(options: AutocannonOptions): Promise<AutocannonResult>
  export default autocannon
}
