/** Reading a Server-Sent Events response in a test, message by message, as the browser's EventSource would. */

/** One message: its id, its event name and its data parsed as JSON. */
export interface SseMessage { id?: string; event?: string; data?: any }

/**
 * Reads an SSE response's named messages as they come. `until(pred)` reads until `pred(messages)`
 * holds, and throws when `ms` pass first or the server ends the stream; `ended()` says whether it did.
 */
export function readSse(res: Response) {
  const r = res.body!.getReader()
  let buf = ''
  let ended = false
  const messages: SseMessage[] = []
  return {
    messages,
    ended: () => ended,
    async until(pred: (m: SseMessage[]) => boolean, ms = 5000) {
      const end = Date.now() + ms
      while (!pred(messages)) {
        if (Date.now() > end || ended) throw new Error(`stream: condition not met; got ${JSON.stringify(messages.map((m) => [m.event, m.id]))}${ended ? ' (ended)' : ''}`)
        const chunk = await Promise.race([r.read(), Bun.sleep(Math.max(1, end - Date.now())).then(() => null)])
        if (!chunk) continue
        if (chunk.done) { ended = true; continue }
        buf += new TextDecoder().decode(chunk.value)
        let i
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i); buf = buf.slice(i + 2)
          const m: SseMessage = {}
          for (const line of block.split('\n')) {
            if (line.startsWith('id: ')) m.id = line.slice(4)
            else if (line.startsWith('event: ')) m.event = line.slice(7)
            else if (line.startsWith('data: ')) m.data = JSON.parse(line.slice(6))
          }
          if (m.event) messages.push(m)
        }
      }
    },
    cancel: () => r.cancel().catch(() => {}),
  }
}
