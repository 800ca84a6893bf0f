// The task an attempt worked: its instruction, collapsible, mathematics typeset.
import { api, h, put } from '../dom.js';
import { mathText } from './math.js';

export function instructionPanel(attemptId) {
  const el = h('details', { class: 'instruction', id: 'instruction' }, h('summary', {}, 'Task instruction'));
  api(`/api/attempts/${encodeURIComponent(attemptId)}/task`).then((task) => {
    put(el, h('summary', {}, `Task instruction · ${task.task_name}`, (task.tags || []).length ? h('span', { class: 'muted' }, ` · ${task.tags.join(', ')}`) : null),
      mathText(task.instruction || '(no instruction recorded)', 'div', { class: 'instruction-text' }));
  }).catch(() => { el.hidden = true; }); // an imported task may not be in this store
  return el;
}
