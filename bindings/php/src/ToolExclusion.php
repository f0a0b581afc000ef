<?php

declare(strict_types=1);

namespace Toolgate;

/** One tool a tool set held back: its name, its reason code, and whether this user may be shown the name. */
final class ToolExclusion
{
    public function __construct(
        public readonly string $name,
        public readonly string $reason,
        public readonly bool $nameVisible = true,
    ) {
    }
}
