// @ts-check
// The choice of a plan and, for enterprise, its own limits: the new-account form's and the account
// page's plan form.

/**
 * @import { AdminAccount, AdminAccountDetail, AdminPlanChange } from '../../../admin/admin-schemas.ts'
 * @import { WindowField } from '../../../../domain/limit-windows.ts'
 */

import { el, field } from './dom.js';
import { count } from './format.js';

/** @type {Readonly<Record<AdminAccount['plan'], string>>} */
const PLAN_NAMES = { free: 'free', pro: 'pro', business: 'business', enterprise: 'enterprise (its own limits)' };

/**
 * How the console words each limit window, by its field: its input's label, its unit in a table cell
 * (`60/min`) and in a sentence (`60 requests a minute`). `tsc` refuses this table until it names every
 * window of LIMIT_WINDOWS (src/domain/limit-windows.ts); the inputs and every page's limits follow from it.
 * @type {Readonly<Record<WindowField, { label: string, unit: string, every: string }>>}
 */
const WINDOW_WORDS = {
  perMinute: { label: 'Per minute', unit: 'min', every: 'a minute' },
  perDay: { label: 'Per day', unit: 'day', every: 'a day' },
};

const WINDOWS = /** @type {[WindowField, (typeof WINDOW_WORDS)[WindowField]][]} */ (Object.entries(WINDOW_WORDS));

/**
 * An account's limits in a table cell: `60/min, 1,000/day`.
 * @param {AdminAccount['limits']} limits
 */
export function limitsInBrief(limits) {
  return WINDOWS.map(([name, { unit }]) => `${count(limits[name])}/${unit}`).join(', ');
}

/**
 * An account's limits in a sentence: `60 requests a minute, 1,000 a day`.
 * @param {AdminAccount['limits']} limits
 */
export function limitsInWords(limits) {
  return WINDOWS.map(
    ([name, { every }], index) => `${count(limits[name])}${index === 0 ? ' requests' : ''} ${every}`,
  ).join(', ');
}

/**
 * An account's limits as rows of a stat list, one per window.
 * @param {AdminAccount['limits']} limits
 */
export function limitStats(limits) {
  return WINDOWS.map(([name, { label }]) => ({ label, value: count(limits[name]) }));
}

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
  const inputs = WINDOWS.map(([name, { label }]) => {
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
