'use strict';
// The error classes of toolgate. Every error the package throws is a
// ToolgateError: nothing that fails is ever read as an answer, let alone an
// allow. The refusal classes are made here, at load, from the runtime's
// catalogue (`codes().refusalKinds`: one class per kind, named by its
// `exception`, extending the class of its kind): there is no JS copy of
// the list of kinds. errors.d.ts is generated from the same catalogue
// (scripts/gen-errors-dts.js) and a test checks it matches.

const native = require('./native.js');

const CATALOGUE = native.codes();

class ToolgateError extends Error {
  constructor(message, options) {
    super(message, options);
    Object.defineProperty(this, 'name', { value: new.target.name, enumerable: false, configurable: true, writable: true });
  }
}

/** A refusal: a call (or a gateway answer) that toolgate refuses. */
class PolicyViolation extends ToolgateError {
  constructor(refusal, { decision = null, classification = null } = {}) {
    super(refusal.modelText);
    this.refusal = Object.freeze({ ...refusal });
    this.kind = refusal.kind;
    this.refusalClass = refusal.class;
    this.toolName = refusal.tool;
    this.profile = refusal.profile;
    this.consumer = refusal.consumer;
    this.configuration = refusal.configuration;
    this.file = refusal.file;
    this.policy = refusal.policy;
    this.origin = refusal.origin;
    this.rule = refusal.rule;
    this.detail = refusal.detail;
    /** Why a grant given did not let the call run (`grantReplayed`, ...), else null. */
    this.grantError = refusal.grantError ?? null;
    this.remediation = refusal.remediation;
    this.retryable = refusal.retryable;
    this.action = refusal.action;
    this.modelText = refusal.modelText;
    this.decision = decision;
    this.classification = classification;
  }
}

/** A refusal a person must fix (docs/refusals.md, class `configuration`). */
class ConfigurationRefusal extends PolicyViolation {}
/** A refusal the agent may fix by changing its request (class `runtime`). */
class RuntimeRefusal extends PolicyViolation {}
/** A call that waits for a person's approval (class `approval`): the host
 * asks a person and calls again; the model must not retry on its own. */
class ApprovalRefusal extends PolicyViolation {}

const BY_CLASS = { configuration: ConfigurationRefusal, runtime: RuntimeRefusal, approval: ApprovalRefusal };

/** Refusal classes by kind code, made from the catalogue. */
const KINDS = new Map();
const exported = {};
for (const k of CATALOGUE.refusalKinds) {
  const Base = BY_CLASS[k.class];
  if (Base === undefined || typeof k.exception !== 'string' || !/^[A-Z][A-Za-z0-9]*$/.test(k.exception)) {
    throw new Error(`toolgate: the catalogue's refusal kind ${JSON.stringify(k)} has no usable class`);
  }
  const C = { [k.exception]: class extends Base {} }[k.exception];
  Object.defineProperty(C, 'kind', { value: k.code, enumerable: true });
  KINDS.set(k.code, C);
  exported[k.exception] = C;
}

/** The error of a typed refusal: an instance of its kind's class. */
function violationOf(refusal, extra) {
  const C = KINDS.get(refusal.kind) ?? BY_CLASS[refusal.class] ?? ConfigurationRefusal;
  return new C(refusal, extra);
}

/** The class of a refusal kind (`notInProfile` -> ToolNotInProfile). */
function refusalClassOf(kind) {
  return KINDS.get(kind) ?? null;
}

class StatusError extends ToolgateError {
  constructor(message, { status = 'ERR_ARGUMENT', statusNumber = null, code = null, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.status = status;
    this.statusNumber = statusNumber ?? statusNumberOf(status);
    if (code !== null) this.code = code;
  }
}

/** An argument the runtime cannot use (status ERR_ARGUMENT, ERR_UTF8, ERR_OUT_OF_RANGE, ERR_KEYS). */
class ArgumentError extends StatusError {}

/** A table (or an input file) that cannot be used; `code` is the corpus' load code. */
class LoadError extends StatusError {}

class UnknownConfigurationError extends StatusError {
  constructor(message, { name = null, suggestion = null, ...rest } = {}) {
    super(message, { status: 'ERR_UNKNOWN_CONFIGURATION', ...rest });
    this.configurationName = name;
    this.suggestion = suggestion;
  }
}

/** A consumer name the policy does not know (never a consumer without a profile by accident). */
class UnknownConsumerError extends StatusError {
  constructor(message, { name = null, suggestion = null, ...rest } = {}) {
    super(message, { status: 'ERR_UNKNOWN_CONSUMER', ...rest });
    this.consumerName = name;
    this.suggestion = suggestion;
  }
}

class UnknownSkillError extends StatusError {
  constructor(message, { name = null, ...rest } = {}) {
    super(message, { status: 'ERR_UNKNOWN_SKILL', ...rest });
    this.skillName = name;
  }
}

/** A stored run that cannot be read; `state` admits no tool. Its getter
 * `state` (the RunState to use instead) is defined in index.js, next to
 * RunState: this module needs nothing of index.js. */
class RunStateError extends StatusError {
  constructor(message, { state = null, ...rest } = {}) {
    super(message, rest);
    this.storedState = state;
  }
}

const STATUS_NUMBERS = new Map(CATALOGUE.statuses.map((s) => [s.name, s.number]));
function statusNumberOf(name) {
  return STATUS_NUMBERS.get(name) ?? null;
}

const CLASSES = { ArgumentError, LoadError, UnknownConfigurationError, UnknownConsumerError, UnknownSkillError, RunStateError };
const MARK = '{"toolgate":';

/** The package's error for anything the addon threw. */
function fromNative(e) {
  if (e instanceof ToolgateError) return e;
  const message = e && typeof e.message === 'string' ? e.message : String(e);
  if (message.startsWith(MARK)) {
    let x = null;
    try {
      x = JSON.parse(message).toolgate;
    } catch {
      x = null;
    }
    const C = x && CLASSES[x.class];
    if (C) {
      const { class: _c, message: m, ...rest } = x;
      return new C(m, rest);
    }
  }
  // The addon's own argument conversion (a number where a string goes, a
  // missing field of a live tool): an argument error, never an answer.
  if (e && typeof e.code === 'string' && e.code !== 'GenericFailure') {
    return new ArgumentError(message, { status: 'ERR_ARGUMENT', cause: e });
  }
  return new ToolgateError(message, { cause: e });
}

module.exports = {
  CATALOGUE,
  ToolgateError,
  PolicyViolation,
  ConfigurationRefusal,
  RuntimeRefusal,
  ApprovalRefusal,
  ArgumentError,
  LoadError,
  UnknownConfigurationError,
  UnknownConsumerError,
  UnknownSkillError,
  RunStateError,
  ...exported,
  violationOf,
  refusalClassOf,
  fromNative,
};
