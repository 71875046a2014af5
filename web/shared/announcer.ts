/**
 * A polite status of a page's own for what changes live (a job arriving on the board, a note
 * reaching the driver): visually hidden, apart from the connection's line, so a screen reader
 * says each change once.
 */
export function politeAnnouncer(id: string, place: (el: HTMLElement) => void): HTMLElement {
  const el = document.createElement('p')
  el.className = 'visually-hidden'
  el.setAttribute('role', 'status')
  el.id = id
  place(el)
  return el
}
