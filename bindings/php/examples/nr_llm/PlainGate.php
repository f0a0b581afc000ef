<?php

declare(strict_types=1);

namespace Toolgate\Examples\NrLlm;

/**
 * The gate written by hand in plain PHP, as an extension would before it
 * had a compiled table: the same seven gates in the same order, over the
 * policy as arrays (here Table::policy(); in a CMS, its configuration
 * records). Kept as the baseline of BENCHMARKS.md and checked against the
 * conformance corpus, so the comparison is between two correct gates.
 */
final class PlainGate
{
    /** @var array<string,array<string,mixed>> tool name => tool */
    private array $tools = [];
    /** @var array<string,array<string,mixed>> */
    private array $configurations = [];

    /** @param array<string,mixed> $policy */
    public function __construct(private array $policy)
    {
        foreach ($policy['tools'] as $t) {
            $this->tools[$t['name']] = $t;
        }
        foreach ($policy['configurations'] as $c) {
            $this->configurations[$c['name']] = $c;
        }
    }

    /**
     * @param array{allowedToolNames?:mixed,excludedToolNames?:mixed}|null $run the stored run (decoded), null for a new run
     * @return array{0:bool,1:?string,2:bool} allowed, reason, observed only
     */
    public function decide(string $name, string $configuration, string $role, ?string $consumer, ?array $run, ?string $enforcement): array
    {
        $t = $this->tools[$name] ?? null;
        if ($t === null) {
            return [false, 'notRegistered', false];
        }
        $c = $this->configurations[$configuration];
        if (!$t['enabled']) {
            return [false, 'toolDisabled', false];
        }
        if ($t['adminOnly'] && $role !== 'admin') {
            return [false, 'requiresAdmin', false];
        }
        if ($consumer !== null && !$this->inProfile($t, $consumer)) {
            return [false, 'notInProfile', false];
        }
        $allow = $run === null ? $c['allowList'] : ($run['allowedToolNames'] ?? null);
        if ($allow === false) {
            return [false, 'configurationGroup', false];
        }
        if ($name !== $this->policy['skillLoader']) {
            $inGroups = $c['groups'] === null || in_array($t['group'], $c['groups'], true);
            if (!$inGroups || ($allow !== null && !in_array($name, $allow, true))) {
                return [false, 'configurationGroup', false];
            }
        }
        $runExcluded = $run['excludedToolNames'] ?? [];
        if (in_array($name, $c['excluded'], true) || $runExcluded === false || in_array($name, $runExcluded, true)) {
            return [false, 'configurationExcluded', false];
        }
        if ($t['class'] > $c['ceiling']) {
            $observe = $enforcement === null ? $this->policy['observe'] : strtolower(trim($enforcement)) === 'observe';
            if ($t['remote'] || !$observe) {
                return [false, 'trustZone', false];
            }
            return [true, 'trustZone', true];
        }
        return [true, null, false];
    }

    /**
     * Every registered tool refused, in registry order; remote tools only where names are visible.
     * @param array<string,mixed>|null $run
     * @return list<array{tool:string,reason:string}>
     */
    public function unavailable(string $configuration, string $role, ?string $consumer, ?array $run, ?string $enforcement): array
    {
        $visible = match ($this->policy['remoteVisibility']) {
            'everyone' => true,
            'nobody' => false,
            default => $role === 'admin',
        };
        $out = [];
        foreach ($this->tools as $name => $t) {
            if ($t['remote'] && !$visible) {
                continue;
            }
            [$allowed, $reason] = $this->decide((string) $name, $configuration, $role, $consumer, $run, $enforcement);
            if (!$allowed) {
                $out[] = ['tool' => (string) $name, 'reason' => $reason];
            }
        }
        return $out;
    }

    /**
     * Whether a person approves each call of an offered tool: the
     * configuration's needs-approval selects it, or the consumer's profile's
     * does (docs/approvals.md).
     */
    public function needsApproval(string $name, string $configuration, ?string $consumer): bool
    {
        $t = $this->tools[$name] ?? null;
        if ($t === null) {
            return false;
        }
        if (self::selects($this->configurations[$configuration]['approval'], $t)) {
            return true;
        }
        $profileName = $consumer === null ? null : ($this->policy['consumers'][$consumer] ?? null);
        foreach ($this->policy['profiles'] as $p) {
            if ($p['name'] === $profileName && self::selects($p['approval'], $t)) {
                return true;
            }
        }
        return false;
    }

    /**
     * @param array{tools:list<string>,groups:list<string>,prefixes:list<string>} $s
     * @param array<string,mixed> $t
     */
    private static function selects(array $s, array $t): bool
    {
        if (in_array($t['name'], $s['tools'], true) || in_array($t['group'], $s['groups'], true)) {
            return true;
        }
        foreach ($s['prefixes'] as $prefix) {
            if (str_starts_with($t['name'], $prefix)) {
                return true;
            }
        }
        return false;
    }

    /** @param array<string,mixed> $t */
    private function inProfile(array $t, string $consumer): bool
    {
        $profileName = $this->policy['consumers'][$consumer] ?? null;
        if ($profileName === null) {
            return $this->policy['unprofiled'] !== 'refused';
        }
        foreach ($this->policy['profiles'] as $p) {
            if ($p['name'] !== $profileName) {
                continue;
            }
            if (in_array($t['name'], $p['tools'], true) || in_array($t['group'], $p['groups'], true)) {
                return true;
            }
            foreach ($p['prefixes'] as $prefix) {
                if (str_starts_with($t['name'], $prefix)) {
                    return true;
                }
            }
        }
        return false;
    }
}
