import { Type, type Static } from 'typebox';
import { USAGE_OPERATIONS, USAGE_OUTCOMES } from '../domain/usage.ts';

/**
 * The usage history on the wire, one shape for the public API (GET /v1/usage/history) and the admin
 * API (its account and all-accounts histories). Each document words it for its own readers, so the
 * descriptions and the component's name are given by the caller; the shape is the same.
 */
export interface UsageHistoryWording {
  /** The component's name in its document. */
  readonly id: string;
  readonly description: string;
  readonly from: string;
  readonly to: string;
  /** Left out: the granularity has no description. */
  readonly granularity?: string;
  readonly points: string;
  readonly at: string;
  readonly operation: string;
  readonly outcome: string;
  readonly count: string;
}

const Instant = (description: string) => Type.String({ format: 'date-time', description });

export function usageHistorySchema(wording: UsageHistoryWording) {
  const granularity = wording.granularity === undefined ? {} : { description: wording.granularity };
  return Type.Object(
    {
      from: Instant(wording.from),
      to: Instant(wording.to),
      granularity: Type.Enum(['hour', 'day'] as const, { type: 'string', ...granularity }),
      points: Type.Array(
        Type.Object(
          {
            at: Instant(wording.at),
            operation: Type.Enum(USAGE_OPERATIONS, { type: 'string', description: wording.operation }),
            outcome: Type.Enum(USAGE_OUTCOMES, { type: 'string', description: wording.outcome }),
            count: Type.Integer({ minimum: 1, description: wording.count }),
          },
          { additionalProperties: false },
        ),
        { description: wording.points },
      ),
    },
    { $id: wording.id, additionalProperties: false, description: wording.description },
  );
}

/** A usage history as both APIs send it. */
export type UsageHistoryView = Static<ReturnType<typeof usageHistorySchema>>;
