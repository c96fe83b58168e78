import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const MODULE = pathToFileURL(join(import.meta.dirname, '..', '..', 'src', 'storage', 'sqlite-connections.ts')).href;

/**
 * Runs in its own process, with V8's test intrinsics: rows read through the adapter are ordinary
 * objects with fast properties, and the rows of one statement share one hidden class.
 */
const PROBE = `
const { DatabaseSync } = await import('node:sqlite');
const { NodeSqliteDatabase } = await import(${JSON.stringify(MODULE)});
const hasFastProperties = new Function('a', 'return %HasFastProperties(a)');
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)');
const connection = new DatabaseSync(':memory:');
connection.exec('CREATE TABLE pets (id INTEGER PRIMARY KEY, name TEXT, category_id INTEGER, status TEXT)');
connection.exec(
  "INSERT INTO pets (name, category_id, status) VALUES ('Rex', 9007199254740993, 'sold'), ('Tom', 2, NULL)",
);
const database = new NodeSqliteDatabase(connection);
const rows = database.prepare('SELECT id, name, category_id, status FROM pets ORDER BY id').all([]);
process.stdout.write(JSON.stringify({
  rows: rows.map((row) => ({ ...row, id: String(row.id), category_id: String(row.category_id) })),
  fast: rows.every((row) => hasFastProperties(row)),
  sameMap: haveSameMap(rows[0], rows[1]),
}));
`;

it('reads SQLite rows as objects with fast properties that share a hidden class per statement', async () => {
  const flags = ['--allow-natives-syntax', '--input-type=module', '--eval', PROBE];
  const { stdout } = await promisify(execFile)(process.execPath, flags, { encoding: 'utf8' });
  assert.deepEqual(JSON.parse(stdout), {
    rows: [
      { id: '1', name: 'Rex', category_id: '9007199254740993', status: 'sold' },
      { id: '2', name: 'Tom', category_id: '2', status: null },
    ],
    fast: true,
    sameMap: true,
  });
});
