// Type-checked (not run) by test/types.test.js with tsc --noEmit --strict:
// the declarations describe the API as the README shows it.
import { Table, ToolNotInProfile, ApprovalRequired, ContentPolicyViolation, PolicyViolation, LoadError, RunState, LiveTool, raiseForAnswer, type Decision, type Refusal, type ApprovalRequest } from '../index';
import { governedClient, guardServer } from '../mcp';

const table: Table = Table.load('policy.tgt');
const ctx = table.context('support-chat', { role: 'user', consumer: 'support-bot', run: RunState.start(table, 'support-chat') });
const d: Decision = ctx.decide('refund.issue');
const allowed: boolean = d.allowed && d.reason === null;
try {
  ctx.checkCall('refund.issue');
} catch (e) {
  if (e instanceof ToolNotInProfile) {
    const profile: string | null = e.profile;
    const fix: string = e.remediation;
    const kind: 'notInProfile' = e.kind;
    void [profile, fix, kind];
  } else if (e instanceof PolicyViolation) {
    const r: Refusal = e.refusal;
    void r;
  } else if (e instanceof LoadError) {
    const code: string = e.code;
    void code;
  }
}
try {
  ctx.checkCall('refund.issue', { order: 17 }, { grant: '{}', approverKeys: 'PEM', now: 1_800_000_000 });
  ctx.checkCall('refund.issue', null, { grant: null });
  const request: ApprovalRequest = ctx.approvalRequest('refund.issue', { order: 17 }, 'q-1');
  const digest: string = request.argumentsDigest;
  void digest;
} catch (e) {
  if (e instanceof ApprovalRequired) {
    const why: string | null = e.grantError;
    const code: string | undefined = e.refusal.grantError;
    void [why, code];
  }
}
const r = raiseForAnswer('{}', { httpStatus: 422, headers: { 'x-a': ['1', '2'] } });
if (r.outcome === 'toolFailure') void r.text.length;
const live = new LiveTool('late', 'g', { remote: false, class: null });
void ctx.unavailable({ live: [live] })[0]?.reason;
void ctx.toolSet({ audience: 'model' }).excluded.map((x) => x.name);
void [allowed, ContentPolicyViolation.kind, governedClient, guardServer];
