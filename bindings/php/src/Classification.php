<?php

declare(strict_types=1);

namespace Toolgate;

/**
 * What a gateway's answer to a tool call means: `success`, `toolFailure`
 * (the tool ran and failed) or `refusal` (with a typed Refusal). An answer
 * nothing recognises is a generic policy refusal, never success.
 */
final class Classification
{
    /** @param array<string,mixed> $data */
    public function __construct(
        public readonly string $outcome,
        public readonly ?Refusal $refusal,
        public readonly ?string $text,
        public readonly array $data,
    ) {
    }

    /**
     * Classify a gateway answer: the body bytes as received, the HTTP status,
     * the gateway (origin) and the tool when known; with the table's declared
     * rules for that gateway first (no table: the built-in rules only).
     */
    public static function of(string $body, ?int $httpStatus = null, ?string $origin = null, ?string $tool = null, ?Table $table = null): self
    {
        $a = Native::json(
            'toolgate_classify_json', $table?->cdata(), $body, strlen($body), $httpStatus ?? -1,
            $origin, $origin === null ? 0 : strlen($origin), $tool, $tool === null ? 0 : strlen($tool),
        );
        return new self(
            (string) $a['outcome'],
            isset($a['refusal']) ? Refusal::fromArray($a['refusal']) : null,
            $a['text'] ?? null,
            $a,
        );
    }

    /**
     * This classification, unless it is a refusal: then the exception of
     * its kind (every one a PolicyViolationException). Success and a tool
     * failure (isError: true) are returned, never thrown.
     * @throws Exception\PolicyViolationException
     */
    public function orThrow(): self
    {
        if ($this->refusal !== null) {
            throw Exception\PolicyViolationException::of($this->refusal);
        }
        return $this;
    }

    public function isSuccess(): bool
    {
        return $this->outcome === 'success';
    }
}
