/** This package's version, as in its package.json (a test keeps the two equal); sent in the User-Agent. */
export const CLIENT_VERSION = '2.2.0';
