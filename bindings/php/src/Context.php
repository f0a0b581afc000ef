<?php

declare(strict_types=1);

namespace Toolgate;

use FFI;
use FFI\CData;
use Toolgate\Exception\InvalidArgumentException;
use Toolgate\Exception\PolicyViolationException;
use Toolgate\Exception\ToolgateException;

/**
 * Everything a decision depends on besides the tool: configuration, role,
 * MCP consumer, run state, enforcement. Keeps its table alive.
 */
final class Context
{
    private FFI $ffi;

    /**
     * The decisions this context has made for names its table holds, by
     * name. A context never changes (its table, configuration, role,
     * consumer, run and enforcement are fixed when it is made, and a
     * TableHandle swap makes new contexts, never changes this one), so a
     * decision once made is the answer for the context's whole life. Names
     * the table does not hold are never kept: each of them goes to the
     * library again (and a stranger's names cannot grow this array).
     * @var array<string, Decision>
     */
    private array $decisions = [];

    /** @var array{tools:list<string>,reasons:list<string>}|null unavailableColumns(), made once */
    private ?array $columns = null;

    private function __construct(private CData $ptr, private Table $table)
    {
        $this->ffi = Native::ffi();
    }

    /** @internal use Table::context() */
    public static function make(Table $table, string $configuration, Role $role, ?string $consumer, ?RunState $run, ?string $enforcement): self
    {
        $ffi = Native::ffi();
        $out = $ffi->new('toolgate_context*');
        Native::check($ffi->toolgate_context_new(
            $table->cdata(), $configuration, strlen($configuration), $role->code(),
            $consumer, $consumer === null ? 0 : strlen($consumer),
            $run?->cdata(),
            $enforcement, $enforcement === null ? 0 : strlen($enforcement),
            FFI::addr($out),
        ));
        return new self($out, $table);
    }

    public function __destruct()
    {
        $this->ffi->toolgate_context_free($this->ptr);
    }

    /** A clone is a context of its own over the same table (each is freed once). */
    public function __clone()
    {
        $this->ptr = Native::cloned('toolgate_context', 'toolgate_context_clone', $this->ptr);
    }

    public function table(): Table
    {
        return $this->table;
    }

    /**
     * Decide for a tool by name; an unknown name is a NotRegistered refusal.
     * The first decision for a name the table holds crosses into the
     * library (toolgate_decide_packed) and is kept by this context; asking
     * again returns the same Decision object without a call. A name the table
     * does not hold is asked of the library every time.
     */
    public function decide(string $tool): Decision
    {
        return $this->decisions[$tool] ?? $this->decideFresh($tool);
    }

    /** The library's decision, kept when the table holds the name. */
    private function decideFresh(string $tool): Decision
    {
        $p = $this->ffi->toolgate_decide_packed($this->ptr, $tool, strlen($tool));
        if ($p < 0) {
            Native::check(-$p);
        }
        $d = Decision::fromPacked($tool, $p);
        if ($d->reason !== Reason::NotRegistered) {
            $this->decisions[$tool] = $d;
        }
        return $d;
    }

    /** Whether a call to the tool may run (the cheapest question). Errors throw; never a silent allow. */
    public function isAllowed(string $tool): bool
    {
        return ($this->decisions[$tool] ?? $this->decideFresh($tool))->mayCall();
    }

    /**
     * Decide for many tools at once (a gateway filtering an upstream's
     * tools/list): exactly what decide() gives name by name, in order, from
     * one call across the FFI boundary (toolgate_decide_many_packed: the names
     * go as one string with their lengths, the answers come back a byte each).
     * A name that is not UTF-8 throws, as decide() does, and nothing is decided.
     * @param list<string> $tools
     * @return list<Decision>
     */
    public function decideMany(array $tools): array
    {
        $n = count($tools);
        if ($n === 0) {
            return [];
        }
        $tools = array_values($tools);
        $lens = $this->ffi->new("size_t[{$n}]");
        if (FFI::sizeof($lens) === 8 * $n) {
            // 64-bit size_t: every length in one copy (pack 'Q': 64-bit, machine byte order).
            FFI::memcpy($lens, pack('Q*', ...array_map('strlen', $tools)), 8 * $n);
        } else {
            foreach ($tools as $i => $tool) {
                $lens[$i] = strlen($tool);
            }
        }
        $out = $this->ffi->new("uint8_t[{$n}]");
        $names = implode('', $tools);
        Native::check($this->ffi->toolgate_decide_many_packed($this->ptr, $names, strlen($names), $lens, $n, $out));
        $packed = FFI::string($out, $n);
        $decisions = [];
        foreach ($tools as $i => $tool) {
            $decisions[] = Decision::fromPacked($tool, ord($packed[$i]));
        }
        return $decisions;
    }

    /** Decide by tool id (registry order). */
    public function decideId(int $id): Decision
    {
        if ($id < 0 || $id > 0xFFFFFFFF) {
            throw new InvalidArgumentException("tool id {$id}", Native::ERR_OUT_OF_RANGE);
        }
        $d = $this->ffi->new('toolgate_decision');
        Native::check($this->ffi->toolgate_decide_id($this->ptr, $id, FFI::addr($d)));
        return new Decision($this->table->toolName($id), $d->allowed === 1, Reason::fromNumber($d->reason), $d->observed_only === 1, $d->needs_approval === 1);
    }

    /**
     * The decision with its trust-zone facts (class, zone, ceiling), present
     * only when the trust-zone gate was reached.
     * @return array{tool:string,allowed:bool,reason:?string,observedOnly:bool,class?:string,zone?:string,ceiling?:string}
     */
    public function explain(string $tool): array
    {
        return Native::json('toolgate_decide_json', $this->ptr, $tool, strlen($tool));
    }

    /** Decide for a tool registered after compilation, by its live metadata. */
    public function decideLive(LiveTool $tool): Decision
    {
        $json = Native::encode($tool);
        $d = $this->ffi->new('toolgate_decision');
        Native::check($this->ffi->toolgate_decide_live($this->ptr, $json, strlen($json), FFI::addr($d)));
        return new Decision($tool->name, $d->allowed === 1, Reason::fromNumber($d->reason), $d->observed_only === 1, $d->needs_approval === 1);
    }

    /** @return list<string> the offered tools, registry order */
    public function offered(): array
    {
        return Native::json('toolgate_offered_json', $this->ptr);
    }

    /** @return list<Unavailable> every registered tool refused, registry order (remote ones only where visible) */
    public function unavailable(): array
    {
        $out = [];
        foreach ($this->unavailableArray() as $u) {
            $out[] = new Unavailable($u['tool'], Reason::from($u['reason']));
        }
        return $out;
    }

    /** @return list<array{tool:string,reason:string}> the same list as plain arrays (one JSON decode, no objects) */
    public function unavailableArray(): array
    {
        return Native::json('toolgate_unavailable_json', $this->ptr);
    }

    /**
     * The same list as two parallel lists in registry order, the fastest
     * form in PHP: 'tools' (names, always strings) and 'reasons' (codes),
     * entry i of one belonging to entry i of the other. (A map tool =>
     * reason cannot be offered: PHP turns a key like "123" into the integer
     * 123.) Per call only one reason byte per tool crosses the boundary
     * (toolgate_unavailable_reasons); the names are the table's strings,
     * read once per table (Table::toolNames()). Made on the first call and
     * kept: the list of a context never changes (its table is fixed; a
     * TableHandle swap makes new contexts), and PHP arrays are values, so a
     * caller that changes the returned arrays changes its own copy.
     * @return array{tools:list<string>,reasons:list<string>}
     */
    public function unavailableColumns(): array
    {
        return $this->columns ??= $this->unavailableColumnsFresh();
    }

    /** @return array{tools:list<string>,reasons:list<string>} */
    private function unavailableColumnsFresh(): array
    {
        $bytes = Native::string('toolgate_unavailable_reasons', $this->ptr);
        $names = $this->table->toolNames();
        if (strlen($bytes) !== count($names)) {
            throw new ToolgateException('unavailable reasons: ' . strlen($bytes) . ' bytes for ' . count($names) . ' tools');
        }
        $codes = Reason::codesByByte();
        $tools = [];
        $reasons = [];
        foreach ($names as $i => $name) {
            $r = $bytes[$i];
            if ($r !== "\0") {
                $tools[] = $name;
                $reasons[] = $codes[$r];
            }
        }
        return ['tools' => $tools, 'reasons' => $reasons];
    }

    /**
     * @param list<LiveTool> $live
     * @return list<array{tool:string,reason:string}> the table's list, then the live tools refused
     */
    public function unavailableWithLive(array $live): array
    {
        $json = Native::encode(array_values($live));
        return Native::json('toolgate_unavailable_with_live_json', $this->ptr, $json, strlen($json));
    }

    /**
     * The unavailable list as a system-prompt section ('' when nothing is
     * unavailable), with the refused $live tools after the table's (as
     * unavailableWithLive() lists them). Names are escaped by the library:
     * no tool name can add a line to the prompt.
     * @param list<LiveTool> $live
     */
    public function unavailablePrompt(array $live = []): string
    {
        if ($live === []) {
            return Native::string('toolgate_unavailable_prompt', $this->ptr);
        }
        $json = Native::encode(array_values($live));
        return Native::string('toolgate_unavailable_prompt_with_live', $this->ptr, $json, strlen($json));
    }

    /**
     * The check a host runs when a call executes: the decision when the call
     * may run, else the exception of the refusal's kind
     * (ToolNotInProfileException, ..., every one a
     * PolicyViolationException) carrying the typed refusal (for the model: a
     * hidden remote name is refused as an unregistered one) and the
     * decision (the true reason, for the host).
     *
     * A tool a person approves call by call (needs-approval) runs only with
     * $grant, the signed grant's JSON an approver minted for this very call
     * (docs/approvals.md, "Grants"): signed by one of $approverKeys (PEM
     * public keys, as `toolgate keygen` writes them), unexpired at $now (Unix
     * seconds; null or 0: the system clock), bound to this tool, these
     * $arguments (an array of names to values, a JSON object; null: none,
     * bound as {}), this context and this table, and not used before in
     * this process: each grant lets one call run. Otherwise
     * ApprovalRequiredException, whose refusal's grantError (grantReplayed,
     * grantExpired, grantOtherArguments, ...) and detail say why a grant
     * given did not fit (null without a grant). A refused tool is refused
     * whatever the grant; a tool that needs no approval runs, its grant not
     * read. Arguments that are not a JSON object and keys that are not PEM
     * public keys are an InvalidArgumentException: nothing is checked.
     *
     * In $arguments, a nested empty array is written as a JSON list: give
     * an empty object as new \stdClass().
     * @param array<string,mixed>|null $arguments
     * @throws PolicyViolationException
     */
    public function checkCall(string $tool, ?array $arguments = null, ?string $grant = null, ?string $approverKeys = null, ?int $now = null): Decision
    {
        if ($arguments === null && $grant === null && $approverKeys === null && $now === null) {
            $d = $this->decide($tool);
            if ($d->mayCall()) {
                return $d;
            }
            $r = $this->callRefusal($tool);
            if ($r === null) {
                throw new ToolgateException("refused decision without a refusal: {$tool}");
            }
            throw PolicyViolationException::of($r, $d);
        }
        if ($now !== null && $now < 0) {
            throw new InvalidArgumentException("now: Unix seconds, got {$now}", Native::ERR_ARGUMENT);
        }
        $json = self::argumentsJson($arguments);
        $out = $this->ffi->new('toolgate_decision');
        $buf = $this->ffi->new('toolgate_buf');
        Native::check($this->ffi->toolgate_check_call_granted(
            $this->ptr, $tool, strlen($tool),
            $json, $json === null ? 0 : strlen($json),
            $grant, $grant === null ? 0 : strlen($grant),
            $approverKeys, $approverKeys === null ? 0 : strlen($approverKeys),
            $now ?? 0,
            FFI::addr($out), FFI::addr($buf),
        ));
        $refusal = json_decode(Native::take($buf), true, 512, JSON_THROW_ON_ERROR);
        $d = $this->decide($tool);
        if ($refusal === null) {
            return $d;
        }
        throw PolicyViolationException::of(Refusal::fromArray($refusal), $d);
    }

    /**
     * What a person is asked to approve for a call of $tool with
     * $arguments (as checkCall takes them), the runtime's ApprovalRequest:
     * tool, argumentsDigest, configuration, consumer, role, tableDigest and
     * $requestId, the host's id of the question. Show it to an approver,
     * who signs it (`toolgate approve REQUEST.json`); the grant then lets
     * this very call run once through checkCall.
     * @param array<string,mixed>|null $arguments
     * @return array<string,mixed>
     */
    public function approvalRequest(string $tool, ?array $arguments = null, string $requestId = ''): array
    {
        $json = self::argumentsJson($arguments);
        return Native::json(
            'toolgate_approval_request_json',
            $this->ptr, $tool, strlen($tool),
            $json, $json === null ? 0 : strlen($json),
            $requestId, strlen($requestId),
        );
    }

    /** @param array<string,mixed>|null $arguments */
    private static function argumentsJson(?array $arguments): ?string
    {
        // The arguments of a call are an object: [] is {} (json_encode would write []).
        return $arguments === null ? null : ($arguments === [] ? '{}' : Native::encode($arguments));
    }

    /**
     * What this context is offered and what is held back, the runtime's
     * Context::tool_set (toolgate_tool_set_json). $audience 'host' (the
     * default) lists every held-back tool, each with nameVisible; 'model'
     * leaves out those whose name this user may not see (hidden remote
     * tools), as every model-facing output does.
     */
    public function toolSet(string $audience = 'host'): ToolSet
    {
        if ($audience !== 'host' && $audience !== 'model') {
            throw new InvalidArgumentException("toolSet: audience is 'host' or 'model', got '{$audience}'", Native::ERR_ARGUMENT);
        }
        return ToolSet::fromArray(Native::json('toolgate_tool_set_json', $this->ptr), $audience);
    }

    /** The typed refusal of the decision for a tool; null when allowed. */
    public function refusal(string $tool): ?Refusal
    {
        $a = Native::json('toolgate_refusal_json', $this->ptr, $tool, strlen($tool));
        return $a === null ? null : Refusal::fromArray($a);
    }

    /**
     * The typed refusal of a call of the tool (null when it may run): a
     * refused tool's, or ApprovalRequired for an offered tool a person
     * approves call by call (needs-approval).
     */
    public function callRefusal(string $tool): ?Refusal
    {
        $a = Native::json('toolgate_call_refusal_json', $this->ptr, $tool, strlen($tool));
        return $a === null ? null : Refusal::fromArray($a);
    }

    /** The typed refusal for a live tool; null when allowed. */
    public function refusalLive(LiveTool $tool): ?Refusal
    {
        $json = Native::encode($tool);
        $a = Native::json('toolgate_refusal_live_json', $this->ptr, $json, strlen($json));
        return $a === null ? null : Refusal::fromArray($a);
    }
}
