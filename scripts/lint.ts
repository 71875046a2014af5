/**
 * House rules the type checker cannot see. Exits 1 on a violation.
 * - route files never touch the database directly (they call operations);
 * - route files never read a request body themselves (they declare it with `accepts`);
 * - only src/config.ts reads process.env (src/main.ts passes it in);
 * - platform/ helpers import no feature;
 * - the tenant (account, acct_, src/accounts/) and the commercial accounts directory
 *   (commercial_account, cac_, scope accounts:read, src/commercial-accounts/) are never mixed up:
 *   elsewhere the directory is named in full (commercialAccount, commercial_account_id), and its
 *   id prefix and scope are used only in its folder;
 * - jobs import neither texts nor webhooks: what a job change sets off is registered (operations/context-factory.ts);
 * - no focused or skipped tests;
 * - no t.UnionEnum (Elysia fills in its first value as a default);
 * - no t.Integer or t.Numeric (they take "15" for 15, and document string-or-number).
 */
import { Glob } from 'bun'

const problems: string[] = []
for await (const file of new Glob('{src,test,scripts}/**/*.ts').scan('.')) {
  const text = await Bun.file(file).text()
  const lines = text.split('\n')
  lines.forEach((line, i) => {
    const at = `${file}:${i + 1}`
    if (file.endsWith('.routes.ts') && /from ['"](drizzle-orm|bun:sqlite)|from ['"][./]+db\//.test(line)) problems.push(`${at}: route files call operations; they do not import the database`)
    if (file.endsWith('.routes.ts') && /\breadBody\(|\brequest\.(text|json|arrayBuffer|formData|blob|body)\b/.test(line)) problems.push(`${at}: routes take their body from the HTTP layer; declare it with accepts (src/platform/route-props.ts)`)
    if (file.startsWith('src/') && !file.endsWith('.test.ts') && !['src/config.ts', 'src/cli/cli.ts'].includes(file) && /process\.env\b/.test(line)) problems.push(`${at}: read settings in src/config.ts only`)
    if (file.startsWith('src/platform/') && /from ['"]\.\.\/(?!platform|db|version)[a-z-]+\//.test(line) && !file.endsWith('.test.ts')) problems.push(`${at}: platform helpers import no feature`)
    if (file.startsWith('src/jobs/') && !file.endsWith('.test.ts') && /from ['"]\.\.\/(texts|webhooks)\//.test(line)) problems.push(`${at}: jobs do not import texts or webhooks; register a JobWriter in src/operations/context-factory.ts`)
    if (file.startsWith('src/') && !file.endsWith('.test.ts') && !file.startsWith('src/commercial-accounts/') && !['src/accounts/scopes.ts', 'src/platform/ids.ts'].includes(file)
      && /'cac'|cac_|'accounts:read'/i.test(line) && !/^\s*(\/\/|\*|\/\*\*)/.test(line)) {
      problems.push(`${at}: the commercial accounts directory (cac_, accounts:read) lives in src/commercial-accounts/; "account" elsewhere is the tenant`)
    }
    if (/\b(test|it|describe)\.(only|skip|todo)\(/.test(line)) problems.push(`${at}: focused or skipped test`)
    if (file.startsWith('src/') && file !== 'src/platform/schema.ts' && /t\.UnionEnum\(/.test(line)) problems.push(`${at}: use oneOf() from platform/schema: t.UnionEnum defaults to its first value`)
    if (file.startsWith('src/') && !file.endsWith('.test.ts') && /\bt\.(Integer|Numeric)\(/.test(line)) problems.push(`${at}: use wholeNumber() from platform/schema: t.Integer takes "15" for 15 and documents string-or-number`)
  })
}
if (problems.length) {
  console.error(problems.join('\n'))
  process.exit(1)
}
console.log('lint: ok')
