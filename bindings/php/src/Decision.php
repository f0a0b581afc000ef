<?php

declare(strict_types=1);

namespace Toolgate;

/** One tool's answer. */
final class Decision
{
    public function __construct(
        public readonly string $tool,
        public readonly bool $allowed,
        /** The refusing gate; TrustZone with $observedOnly when the zone is only observed. */
        public readonly ?Reason $reason,
        /** Offered only because the trust zone is observed: log it, it is not enforced. */
        public readonly bool $observedOnly,
        /** Offered, and a person approves each call (needs-approval): a call may not run without that. */
        public readonly bool $needsApproval = false,
    ) {
    }

    /** From the packed form of toolgate_decide_packed (>= 0). */
    public static function fromPacked(string $tool, int $packed): self
    {
        return new self($tool, ($packed & Native::PACKED_ALLOWED) !== 0, Reason::fromNumber(($packed & Native::PACKED_REASON_MASK) >> Native::PACKED_REASON_SHIFT), ($packed & Native::PACKED_OBSERVED_ONLY) !== 0, ($packed & Native::PACKED_NEEDS_APPROVAL) !== 0);
    }

    /** Whether a call may run now: offered, and no person's approval awaited. */
    public function mayCall(): bool
    {
        return $this->allowed && !$this->needsApproval;
    }
}
