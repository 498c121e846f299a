/**
 * Memory view of one user: the task board, projects / decisions / facts / preferences with their
 * histories, and the context preview. An admin key picks the user; a user key sees its own.
 */
import type { Api } from '../api.js';
import type { WhoAmI } from '../api-types.js';
import { fmtDateTime, fmtInt } from '../format.js';
import { useI18n } from '../i18n.js';
import { navigate } from '../route.js';
import { Card, Empty, ErrorNote, Loading, useLoad } from '../ui.js';
import { ContextPreviewPanel } from './context-preview.js';
import { Records } from './records.js';
import { TaskBoard } from './task-board.js';
import { UserZone } from '../zone.js';

export function MemoryView({ api, who, user }: { api: Api; who: WhoAmI; user: string | null }) {
  const { t, lang } = useI18n();
  const users = useLoad(async () => (who.admin ? api.users() : []), [api, who.admin]);
  const current = who.admin ? (user ?? users.data?.[0]?.user ?? null) : who.user;
  const memory = useLoad(async () => (current ? api.memory(current) : null), [api, current]);

  return (
    <div class="view memory-view">
      <div class="view-bar">
        {who.admin ? (
          <label class="inline">
            {t('memory.user')}
            <select value={current ?? ''} onChange={(e) => navigate({ view: 'memory', user: e.currentTarget.value })} data-testid="user-select">
              {users.data?.map((u) => (
                <option key={u.user} value={u.user}>
                  {t('memory.userOption', { user: u.user, tasks: fmtInt(u.tasks, lang), turns: fmtInt(u.turns, lang) })}
                </option>
              ))}
              {current && !users.data?.some((u) => u.user === current) && <option value={current}>{current}</option>}
            </select>
          </label>
        ) : (
          <span class="inline">
            {t('memory.user')} <b>{current}</b>
          </span>
        )}
        {memory.data && (
          <span class="subtle" data-testid="memory-version" data-value={memory.data.memoryVersion}>
            {t('memory.version', { n: memory.data.memoryVersion })}
            {users.data?.find((u) => u.user === current)?.lastActiveAt && ` · ${t('memory.lastActive', { at: fmtDateTime(users.data.find((u) => u.user === current)!.lastActiveAt!, lang, memory.data.timeZone) })}`}
            <span data-testid="memory-zone" data-value={memory.data.timeZone}>
              {' · '}
              {t('memory.zone', { zone: memory.data.timeZone })}
            </span>
          </span>
        )}
        <button type="button" class="btn small" onClick={memory.reload} data-testid="memory-refresh">
          {t('common.refresh')}
        </button>
      </div>
      {users.error !== undefined && <ErrorNote error={users.error} onRetry={users.reload} />}
      {!current && !users.loading && (
        <Card>
          <Empty>{t('memory.noUsers')}</Empty>
        </Card>
      )}
      {memory.error !== undefined && <ErrorNote error={memory.error} onRetry={memory.reload} />}
      {current && memory.loading && !memory.data && <Loading />}
      <UserZone.Provider value={memory.data?.timeZone}>
        {memory.data && (
          <div data-testid="memory" data-user={memory.data.user}>
            <TaskBoard tasks={memory.data.tasks} />
            <Records memory={memory.data} />
          </div>
        )}
        {current && <ContextPreviewPanel api={api} user={current} key={current} />}
      </UserZone.Provider>
    </div>
  );
}
