<?php

declare(strict_types=1);

namespace Toolgate;

/**
 * A typed refusal: what went wrong and what to do (docs/refusals.md).
 * `kind` is a gate reason or `contentPolicy` / `policy` /
 * `definitionChanged` / `approvalRequired`; `class` is
 * `configuration` (a person must change a policy; never retryable),
 * `runtime` or `approval`; `action` is `stop`, `rephrase`, `escalate` or
 * `askPerson`.
 */
final class Refusal
{
    /** @param array<string,mixed> $data the JSON object, as the runtime wrote it */
    public function __construct(
        public readonly string $kind,
        public readonly string $class,
        public readonly bool $retryable,
        public readonly string $action,
        public readonly ?string $tool,
        public readonly ?string $profile,
        public readonly ?string $consumer,
        public readonly ?string $configuration,
        public readonly ?string $file,
        public readonly ?string $policy,
        public readonly ?string $origin,
        public readonly ?string $rule,
        public readonly ?string $detail,
        public readonly string $modelText,
        public readonly string $remediation,
        public readonly array $data,
        /**
         * For approvalRequired with a grant that did not let the call run:
         * why (grantReplayed, grantExpired, grantOtherArguments, ...); the
         * text is in $detail. Null otherwise.
         */
        public readonly ?string $grantError = null,
    ) {
    }

    /** @param array<string,mixed> $a */
    public static function fromArray(array $a): self
    {
        return new self(
            (string) $a['kind'], (string) $a['class'], (bool) $a['retryable'], (string) $a['action'],
            $a['tool'] ?? null, $a['profile'] ?? null, $a['consumer'] ?? null, $a['configuration'] ?? null,
            $a['file'] ?? null, $a['policy'] ?? null, $a['origin'] ?? null, $a['rule'] ?? null, $a['detail'] ?? null,
            (string) $a['modelText'], (string) $a['remediation'], $a, $a['grantError'] ?? null,
        );
    }
}
