// @ts-check
// The choice of a plan and, for enterprise, its own limits: the new-account form's and the account
// page's plan form.

/**
 * @import { AdminAccount, AdminAccountDetail, AdminPlanChange } from '../../../admin/admin-schemas.ts'
 */

import { el, field } from './dom.js';

/** @type {Readonly<Record<AdminAccount['plan'], string>>} */
const PLAN_NAMES = { free: 'free', pro: 'pro', business: 'business', enterprise: 'enterprise (its own limits)' };

/**
 * A plan's choice and, for enterprise only, its two limits, as the admin API takes them.
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
  /**
   * @param {'perMinute' | 'perDay'} name
   * @param {number | undefined} value
   */
  const limit = (name, value) =>
    el('input', { id: `${id}-${name}`, name, type: 'number', min: 1, step: 1, required: true, value, class: 'number' });
  const perMinute = limit('perMinute', own?.perMinute);
  const perDay = limit('perDay', own?.perDay);
  const limits = el('span', { class: 'limits' }, field('Per minute', perMinute), field('Per day', perDay));
  const sync = () => {
    const enterprise = select.value === 'enterprise';
    limits.hidden = !enterprise;
    perMinute.disabled = !enterprise;
    perDay.disabled = !enterprise;
  };
  select.addEventListener('change', sync);
  sync();
  return {
    nodes: [field('Plan', select), limits],
    /** @returns {AdminPlanChange} */
    value() {
      const plan = /** @type {AdminAccount['plan']} */ (select.value);
      if (plan !== 'enterprise') return { plan };
      return { plan, perMinute: perMinute.valueAsNumber, perDay: perDay.valueAsNumber };
    },
  };
}
