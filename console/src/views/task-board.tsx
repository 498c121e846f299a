/** Tasks as a board: one column per status (stacked on narrow screens), due times on each card. */
import { TASK_STATUSES, type TaskView } from '../api-types.js';
import { fmtDateTime, fmtInt } from '../format.js';
import { useI18n } from '../i18n.js';
import { Card } from '../ui.js';
import { useUserZone } from '../zone.js';
import { History } from './history.js';

function ClockIcon() {
  return (
    <svg class="icon" viewBox="0 0 16 16" aria-hidden="true">
      <circle cx="8" cy="8" r="6.5" />
      <path d="M8 4.5V8l2.5 1.5" />
    </svg>
  );
}

export function TaskBoard({ tasks }: { tasks: TaskView[] }) {
  const { t, lang } = useI18n();
  const zone = useUserZone();
  return (
    <Card title={t('tasks.title')} testid="task-board" class="board-card">
      <div class="board">
        {TASK_STATUSES.map((status) => {
          const column = tasks.filter((task) => task.status === status).sort((a, b) => (a.due ?? '~').localeCompare(b.due ?? '~'));
          return (
            <section class={`board-column status-${status}`} key={status} data-testid={`board-${status}`} data-count={column.length}>
              <h3>
                {t(`status.${status}`)} <span class="badge">{fmtInt(column.length, lang)}</span>
              </h3>
              {column.length === 0 && <p class="note empty">{t('tasks.none')}</p>}
              {column.map((task) => (
                <article class={`task priority-${task.priority}`} key={task.id} data-testid="task" data-id={task.id} data-status={task.status} data-due={task.due ?? ''}>
                  <p class="task-title">{task.title}</p>
                  <p class="task-meta">
                    {task.due ? (
                      <span class="due" title={task.due}>
                        <ClockIcon /> {fmtDateTime(task.due, lang, zone)}
                        {task.duePhrase && <span class="subtle"> · {task.duePhrase}</span>}
                      </span>
                    ) : (
                      <span class="subtle">{t('tasks.noDue')}</span>
                    )}
                    {task.priority !== 'normal' && <span class={`badge prio-${task.priority}`}>{t(`priority.${task.priority}`)}</span>}
                    {task.project && <span class="badge">{task.project}</span>}
                  </p>
                  <History entries={task.history} />
                </article>
              ))}
            </section>
          );
        })}
      </div>
    </Card>
  );
}
