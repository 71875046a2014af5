import { selectField, type FormState } from '../pages/form'
import type { Html } from '../pages/html'
import type { CommercialAccountRef } from './commercial-account.model'

/**
 * A job form's **Commercial account** select (field `commercial_account_id`): the directory by name,
 * or none. The job's `current` account is always offered, so saving the form never clears it unasked.
 */
export function commercialAccountSelect(form: FormState, choices: CommercialAccountRef[], current: CommercialAccountRef | null = null): Html {
  if (current && !choices.some((c) => c.id === current.id)) choices = [...choices, current]
  return selectField(form, {
    name: 'commercial_account_id', label: 'Commercial account', placeholder: '(none)',
    hint: choices.length ? 'The motor club, police agency, fleet... the job is done for.' : 'None in the directory yet: add them under Accounts.',
    options: choices.map((c) => ({ value: c.id, label: c.name })),
  })
}
