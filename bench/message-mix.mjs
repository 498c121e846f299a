// The message mix of the processMessage benchmarks (bench:http and process-message-cpu): per ten
// messages three English task creations with due phrases, one Chinese one, a task question in
// each language, a completion, a decision, a fact and a chit-chat line. Numbered so that texts
// stay distinct.
const THINGS = ['the quarterly report', 'the TLS certificates', 'the design review notes', 'the invoice for ACME', 'the onboarding checklist', 'the release notes', 'the database migration', 'the team offsite budget'];
const ZH = ['季度报告', '合同', '周会纪要', '预算表', '上线方案', '客户回访'];
const WHEN = ['tomorrow at 3pm', 'by Friday', 'next Monday morning', 'tonight', 'in two hours', 'on March 20'];

/** A generator of the mix: each call returns the next message. */
export function createMessageMix() {
  let n = 0;
  return function nextMessage() {
    const i = n++;
    const thing = THINGS[i % THINGS.length];
    switch (i % 10) {
      case 0:
      case 1:
      case 2:
        return `Remind me to send ${thing} ${WHEN[i % WHEN.length]} (#${i})`;
      case 3:
        return `明天下午三点前把${ZH[i % ZH.length]}发给王经理（${i}）`;
      case 4:
        return 'What are my tasks for today?';
      case 5:
        return `I finished ${thing}`;
      case 6:
        return `We decided to use PostgreSQL for ${thing} because of the reporting needs (#${i})`;
      case 7:
        return `My manager is called Dana and she prefers short updates (#${i})`;
      case 8:
        return '我还有哪些任务没完成？';
      default:
        return `thanks, that helps (#${i})`;
    }
  };
}
