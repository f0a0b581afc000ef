<?php

declare(strict_types=1);

namespace Toolgate\Examples\NrLlm;

use Toolgate\Context;
use Toolgate\Refusal;
use Toolgate\Role;
use Toolgate\RunState;
use Toolgate\TableHandle;

/**
 * The tool-call policy of a PHP chat (as nr_llm's chat would use it): before
 * a tool call the model asked for runs, the same decision that built the
 * offer is checked again; a refusal becomes a typed tool result the model
 * can act on. Replaces the extension's hand-written gate (PlainGate) with the
 * compiled table: one decision per call, the table hot-reloadable.
 */
final class ToolCallPolicy
{
    public function __construct(private TableHandle $tables)
    {
    }

    /**
     * The context of one chat request: the configuration record, the backend
     * user's role, the run's stored state (null for a new run), and the
     * extension setting for trust-zone enforcement.
     */
    public function contextFor(string $configuration, bool $isAdmin, ?string $storedRun, ?string $enforcementSetting): Context
    {
        $table = $this->tables->current(); // one table for the whole request
        $run = $storedRun === null ? RunState::start($table, $configuration) : RunState::fromJson($storedRun);
        return $table->context($configuration, $isAdmin ? Role::Admin : Role::User, null, $run, $enforcementSetting);
    }

    /**
     * Run the tool call if the gate allows it; otherwise return the refusal
     * as the tool's result for the model.
     * @param callable(array<string,mixed>):string $execute
     * @param array<string,mixed> $arguments
     * @return array{ok:bool,content:string,refusal:?Refusal}
     */
    public function call(Context $context, string $tool, array $arguments, callable $execute): array
    {
        $decision = $context->decide($tool);
        if (!$decision->allowed) {
            $refusal = $context->refusal($tool);
            return ['ok' => false, 'content' => $refusal?->modelText ?? 'refused', 'refusal' => $refusal];
        }
        if ($decision->observedOnly) {
            error_log(sprintf('toolgate: %s offered only because the trust zone is observed', $tool));
        }
        return ['ok' => true, 'content' => $execute($arguments), 'refusal' => null];
    }
}
