import type UPlot from 'uplot';

/**
 * The globals the browser scripts use, defined by the libraries their pages load before them. For
 * tsconfig.browser.json only: the server knows none of them.
 */
declare global {
  /** The console's charts: uPlot's self-contained build, dist/uPlot.iife.min.js. */
  const uPlot: typeof UPlot;
  /** The /docs page: swagger-ui's bundle, which has no types of its own; its options as they are documented. */
  const SwaggerUIBundle: ((options: Readonly<Record<string, unknown>>) => unknown) & {
    readonly presets: { readonly apis: unknown };
  };
}
