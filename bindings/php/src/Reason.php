<?php

declare(strict_types=1);

namespace Toolgate;

/** Why a tool is refused: the gates, in their fixed order. */
enum Reason: string
{
    case NotRegistered = 'notRegistered';
    case ToolDisabled = 'toolDisabled';
    case RequiresAdmin = 'requiresAdmin';
    case NotInProfile = 'notInProfile';
    case ConfigurationGroup = 'configurationGroup';
    case ConfigurationExcluded = 'configurationExcluded';
    case TrustZone = 'trustZone';

    /** By TOOLGATE_REASON_* number (1 to 7; 0 is no reason). */
    public static function fromNumber(int $n): ?self
    {
        return match ($n) {
            0 => null,
            1 => self::NotRegistered,
            2 => self::ToolDisabled,
            3 => self::RequiresAdmin,
            4 => self::NotInProfile,
            5 => self::ConfigurationGroup,
            6 => self::ConfigurationExcluded,
            7 => self::TrustZone,
            default => throw new Exception\ToolgateException("reason number {$n}"),
        };
    }

    /** The text for people and models; it never mentions a later gate. */
    public function message(): string
    {
        return match ($this) {
            self::NotRegistered => 'no tool of this name is registered',
            self::ToolDisabled => 'switched off by an administrator',
            self::RequiresAdmin => 'only administrators may use it',
            self::NotInProfile => "not in this consumer's access profile",
            self::ConfigurationGroup => 'not among the tools this configuration allows',
            self::ConfigurationExcluded => 'excluded by this configuration',
            self::TrustZone => 'its data is more sensitive than this provider may receive',
        };
    }
}
