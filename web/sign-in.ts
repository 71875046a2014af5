/**
 * The sign-in page's script: a wrong password comes back with the form's alert filled in, and the
 * keyboard's focus goes to it (a screen reader reads it; the next Tab leads on to the form). The
 * alert also carries `autofocus`, which Chromium does not honour on a plain element.
 */
import { focusRefusal } from './shared/forms'

focusRefusal()
