'use strict';
// The gate written by hand in plain JavaScript, as a host would write it
// before it had a compiled table: the same seven gates in the same order,
// over the policy as plain objects (Table#policy(); in an application, its
// configuration records). A port of bindings/python/tests/plain_gate.py. It
// is the baseline of BENCHMARKS.md ("Node") and is checked against the
// conformance corpus (conformance.test.js), so the comparison is between
// two correct gates.

class PlainGate {
  constructor(policy) {
    this.policy = policy;
    this.tools = new Map(policy.tools.map((t) => [t.name, t]));
    this.configurations = new Map(policy.configurations.map((c) => [c.name, c]));
    this.profiles = new Map(policy.profiles.map((p) => [p.name, p]));
  }

  /** [allowed, reason, observedOnly]. `run`: the stored run, decoded; null for a new run. */
  decide(name, configuration, role, consumer, run, enforcement) {
    const t = this.tools.get(name);
    if (t === undefined) return [false, 'notRegistered', false];
    const c = this.configurations.get(configuration);
    if (!t.enabled) return [false, 'toolDisabled', false];
    if (t.adminOnly && role !== 'admin') return [false, 'requiresAdmin', false];
    if (consumer !== null && !this.inProfile(t, consumer)) return [false, 'notInProfile', false];
    const allow = run === null ? c.allowList : run.allowedToolNames ?? null;
    if (allow === false) return [false, 'configurationGroup', false];
    if (name !== this.policy.skillLoader) {
      const inGroups = c.groups === null || c.groups.includes(t.group);
      if (!inGroups || (allow !== null && !allow.includes(name))) return [false, 'configurationGroup', false];
    }
    const runExcluded = run === null ? [] : run.excludedToolNames ?? [];
    if (c.excluded.includes(name) || runExcluded === false || runExcluded.includes(name)) {
      return [false, 'configurationExcluded', false];
    }
    if (t.class > c.ceiling) {
      let observe;
      if (enforcement === null) observe = this.policy.observe;
      else {
        const trimmed = enforcement.replace(/^[ \t\n\r\0\x0b]+|[ \t\n\r\0\x0b]+$/g, '');
        observe = /^[\x00-\x7f]*$/.test(trimmed) && trimmed.toLowerCase() === 'observe';
      }
      if (t.remote || !observe) return [false, 'trustZone', false];
      return [true, 'trustZone', true];
    }
    return [true, null, false];
  }

  /** Every registered tool refused, in registry order; remote tools only where names are visible. */
  unavailable(configuration, role, consumer, run, enforcement) {
    const visibility = this.policy.remoteVisibility;
    const visible = visibility === 'everyone' || (visibility === 'admins' && role === 'admin');
    const out = [];
    for (const [name, t] of this.tools) {
      if (t.remote && !visible) continue;
      const [allowed, reason] = this.decide(name, configuration, role, consumer, run, enforcement);
      if (!allowed) out.push({ tool: name, reason });
    }
    return out;
  }

  /** Whether a person approves each call of an offered tool: the
   * configuration's needs-approval selects it, or the consumer's profile's
   * does (docs/approvals.md). */
  needsApproval(name, configuration, consumer) {
    const t = this.tools.get(name);
    if (t === undefined) return false;
    if (selects(this.configurations.get(configuration).approval, t)) return true;
    const profileName = consumer === null ? undefined : this.policy.consumers[consumer];
    return profileName !== undefined && selects(this.profiles.get(profileName).approval, t);
  }

  inProfile(t, consumer) {
    const profileName = this.policy.consumers[consumer];
    if (profileName === undefined) return this.policy.unprofiled !== 'refused';
    const p = this.profiles.get(profileName);
    if (p.tools.includes(t.name) || p.groups.includes(t.group)) return true;
    return p.prefixes.some((prefix) => t.name.startsWith(prefix));
  }
}

function selects(s, t) {
  if (s.tools.includes(t.name) || s.groups.includes(t.group)) return true;
  return s.prefixes.some((prefix) => t.name.startsWith(prefix));
}

module.exports = { PlainGate };
