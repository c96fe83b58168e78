// @ts-check
// The choice of a plan and, for enterprise, its own limits: the new-account form's and the account
// page's plan form.

/**
 * @import { AdminAccount, AdminAccountDetail, AdminPlanChange } from '../../../admin/admin-schemas.ts'
 * @import { WindowField } from '../../../../domain/limit-windows.ts'
 */

import { el, field } from './dom.js';

/** @type {Readonly<Record<AdminAccount['plan'], string>>} */
const PLAN_NAMES = { free: 'free', pro: 'pro', business: 'business', enterprise: 'enterprise (its own limits)' };

/**
 * The label of each limit window's input, by its field: `tsc` refuses this table until it names
 * every window of LIMIT_WINDOWS (src/domain/limit-windows.ts), and the inputs follow from it.
 * @type {Readonly<Record<WindowField, string>>}
 */
const LIMIT_LABELS = { perMinute: 'Per minute', perDay: 'Per day' };

/**
 * A plan's choice and, for enterprise only, its limits (one per window), as the admin API takes them.
 * @param {string} id the prefix of the inputs' ids
 * @param {AdminAccount | AdminAccountDetail} [current]
 */
export function planInputs(id, current) {
  const plans = /** @type {[AdminAccount['plan'], string][]} */ (Object.entries(PLAN_NAMES));
  const select = el(
    'select',
    { id: `${id}-plan`, name: 'plan' },
    plans.map(([plan, label]) => el('option', { value: plan, selected: current?.plan === plan }, label)),
  );
  const own = current?.plan === 'enterprise' ? current.limits : undefined;
  const inputs = /** @type {[WindowField, string][]} */ (Object.entries(LIMIT_LABELS)).map(([name, label]) => {
    const attributes = { id: `${id}-${name}`, name, type: 'number', min: 1, step: 1, required: true };
    return { name, label, input: el('input', { ...attributes, value: own?.[name], class: 'number' }) };
  });
  const limits = el('span', { class: 'limits' }, ...inputs.map(({ label, input }) => field(label, input)));
  const sync = () => {
    const enterprise = select.value === 'enterprise';
    limits.hidden = !enterprise;
    for (const { input } of inputs) input.disabled = !enterprise;
  };
  select.addEventListener('change', sync);
  sync();
  return {
    nodes: [field('Plan', select), limits],
    /** @returns {AdminPlanChange} */
    value() {
      const plan = /** @type {AdminAccount['plan']} */ (select.value);
      if (plan !== 'enterprise') return { plan };
      return { plan, ...Object.fromEntries(inputs.map(({ name, input }) => [name, input.valueAsNumber])) };
    },
  };
}
