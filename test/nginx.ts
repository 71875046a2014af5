/** Where nginx is, for the load-balancer test (test/e2e/load-balancer.e2e.test.ts): NGINX_PATH, the PATH, or Debian's /usr/sbin/nginx. */
import { existsSync } from 'node:fs'

export function nginxPath(): string | null {
  if (process.env.NGINX_PATH) return existsSync(process.env.NGINX_PATH) ? process.env.NGINX_PATH : null
  return Bun.which('nginx') ?? (existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : null)
}
