<?php

declare(strict_types=1);

namespace Toolgate;

/** A registered tool the gate refuses, with the first refusing gate. */
final class Unavailable
{
    public function __construct(
        public readonly string $tool,
        public readonly Reason $reason,
    ) {
    }
}
