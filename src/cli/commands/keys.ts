/** `ctxvm keys create|list|revoke`: API keys of the HTTP server (only their SHA-256 is stored). */
import type { Command } from 'commander';
import { UsageError } from '../../errors.js';
import type { ApiKeyRecord } from '../../server/api-keys.js';
import type { CommandContext } from '../io.js';
import { withJson } from '../command-kit.js';
import { requireUser } from '../memory-options.js';
import { table } from '../format.js';

function keyJson(k: ApiKeyRecord) {
  return {
    id: k.keyId,
    user: k.userId,
    admin: k.admin,
    label: k.label,
    createdAt: new Date(k.createdAtMs).toISOString(),
    revokedAt: k.revokedAtMs === null ? null : new Date(k.revokedAtMs).toISOString(),
  };
}

async function withKeys<T>(ctx: CommandContext, fn: (keys: import('../../server/api-keys.js').ApiKeyStore) => Promise<T>): Promise<T> {
  const { openKeyStore } = await import('../../server/open-services.js');
  const opened = await openKeyStore(ctx.config());
  try {
    return await fn(opened.keys);
  } finally {
    await opened.close();
  }
}

export function registerKeys(program: Command, ctx: CommandContext): void {
  const keys = program.command('keys').description('API keys of `ctxvm serve`: a user key reaches only its own user; an admin key reaches every user and the session endpoints');

  withJson(keys.command('create'))
    .description('create a key and print it once (only its SHA-256 is stored)')
    .option('--user <id>', 'the user this key may access')
    .option('--admin', 'an admin key (every user, plus /v1/sessions)')
    .option('--label <text>', 'a note shown by `keys list`')
    .action(async (opts: { user?: string; admin?: boolean; label?: string; json?: boolean }) => {
      if ((opts.user === undefined) === (opts.admin !== true)) throw new UsageError('give either --user <id> or --admin', { hint: 'e.g. ctxvm keys create --user alice' });
      const created = await withKeys(ctx, (store) =>
        store.create(opts.admin ? { admin: true, ...(opts.label ? { label: opts.label } : {}) } : { userId: requireUser(opts.user!), ...(opts.label ? { label: opts.label } : {}) }),
      );
      if (opts.json) return ctx.printJson({ ...keyJson(created), key: created.key });
      ctx.print(created.key);
      ctx.note(`created ${created.admin ? 'admin' : `user ${created.userId}`} key ${created.keyId}; it is shown only now — send it as "Authorization: Bearer <key>"`);
    });

  withJson(keys.command('list'))
    .description('list the keys (ids, users, revocation; never the keys)')
    .action(async (opts: { json?: boolean }) => {
      const list = await withKeys(ctx, (store) => store.list());
      if (opts.json) return ctx.printJson(list.map(keyJson));
      if (!list.length) return ctx.note('no API keys; create one with `ctxvm keys create --user <id>` or `--admin`');
      ctx.print(table(['id', 'access', 'label', 'created', 'revoked'], list.map((k) => [k.keyId, k.admin ? 'admin' : `user ${k.userId}`, k.label ?? '', new Date(k.createdAtMs).toISOString(), k.revokedAtMs === null ? '' : new Date(k.revokedAtMs).toISOString()])));
    });

  withJson(keys.command('revoke'))
    .description('revoke a key by id (effective on the next request)')
    .argument('<id>', 'key id from `keys list`')
    .action(async (id: string, opts: { json?: boolean }) => {
      const revoked = await withKeys(ctx, (store) => store.revoke(id));
      if (opts.json) return ctx.printJson(keyJson(revoked));
      ctx.print(`revoked ${revoked.keyId}`);
    });
}
