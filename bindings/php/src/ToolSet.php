<?php

declare(strict_types=1);

namespace Toolgate;

/**
 * What a context is offered and what is held back (Context::toolSet()): the
 * runtime's Context::tool_set. $excluded lists ToolExclusion entries; in the
 * host form every refused tool, a hidden remote one with nameVisible false;
 * in the model form ('model') only those whose name this user may see.
 */
final class ToolSet
{
    /**
     * @param list<string> $offered
     * @param list<ToolExclusion> $excluded
     */
    public function __construct(
        public readonly string $audience,
        public readonly string $configuration,
        public readonly ?string $consumer,
        public readonly ?string $profile,
        public readonly array $offered,
        public readonly array $excluded,
        public readonly int $descriptorBytes,
        public readonly int $estimatedTokens,
    ) {
    }

    /** @param array<string,mixed> $a the runtime's JSON */
    public static function fromArray(array $a, string $audience = 'host'): self
    {
        $excluded = [];
        foreach ($a['excluded'] as $e) {
            if ($audience === 'model' && !$e['nameVisible']) {
                continue;
            }
            $excluded[] = new ToolExclusion((string) $e['tool'], (string) $e['reason'], (bool) $e['nameVisible']);
        }
        return new self(
            $audience, (string) $a['configuration'], $a['consumer'] ?? null, $a['profile'] ?? null,
            array_map('strval', $a['offered']), $excluded, (int) $a['descriptorBytes'], (int) $a['estimatedTokens'],
        );
    }
}
