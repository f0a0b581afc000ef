<?php

declare(strict_types=1);

namespace Toolgate;

/**
 * Why a tool is refused: the gates, in their fixed order. The cases are the
 * gate codes; numbers and messages come from the library
 * (toolgate_codes_json), and the tests check the cases against it.
 */
enum Reason: string
{
// generated: gates (UPDATE_HOST_LISTS=1 cargo test -p toolgate-reference --test host_lists)
    case NotRegistered = 'notRegistered';
    case ToolDisabled = 'toolDisabled';
    case RequiresAdmin = 'requiresAdmin';
    case NotInProfile = 'notInProfile';
    case ConfigurationGroup = 'configurationGroup';
    case ConfigurationExcluded = 'configurationExcluded';
    case TrustZone = 'trustZone';
// end generated: gates

    /** By TOOLGATE_REASON_* number (1 to the number of gates; 0 is no reason). */
    public static function fromNumber(int $n): ?self
    {
        if ($n === 0) {
            return null;
        }
        $gate = Native::codes()['gates'][$n - 1] ?? null;
        if ($gate === null) {
            throw new Exception\ToolgateException("reason number {$n}");
        }
        return self::from($gate['code']);
    }

    /** The TOOLGATE_REASON_* number (the gate's place in the order, from 1). */
    public function number(): int
    {
        return array_search($this, self::cases(), true) + 1;
    }

    /** The text for people and models, as the library words it; it never mentions a later gate. */
    public function message(): string
    {
        return Native::codes()['gates'][$this->number() - 1]['message'];
    }

    /**
     * Reason byte of toolgate_unavailable_reasons => reason code.
     * @return array<string,string>
     */
    public static function codesByByte(): array
    {
        static $codes = null;
        if ($codes === null) {
            $codes = [];
            foreach (Native::codes()['gates'] as $g) {
                $codes[chr($g['number'])] = $g['code'];
            }
        }
        return $codes;
    }
}
