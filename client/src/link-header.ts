/** The target of the first `Link` (RFC 8288) with the given relation, resolved against the response URL. */
export function linkTarget(headers: Headers, relation: string, responseUrl: string): URL | undefined {
  const field = headers.get('link');
  if (field === null) return undefined;
  for (const match of field.matchAll(/<([^>]*)>([^<]*)/g)) {
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(match[2] ?? '');
    const relations = (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/);
    if (relations.includes(relation)) return new URL(match[1] ?? '', responseUrl);
  }
  return undefined;
}
