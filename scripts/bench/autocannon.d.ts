/** The part of autocannon's programmatic API that scripts/bench uses (the package ships no types). */
declare module 'autocannon' {
  interface RequestParams {
    method?: string
    path?: string
    body?: string
    headers?: Record<string, string>
  }
  /** One entry of `requests`: setupRequest runs before each request and returns what to send. */
  export interface AutocannonRequest extends RequestParams {
    setupRequest?: (req: RequestParams) => RequestParams
  }
  interface AutocannonOptions {
    url: string
    connections?: number
    duration?: number
    workers?: number
    headers?: Record<string, string>
    requests?: AutocannonRequest[]
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
